package replicas

// Waiting returns how many reads wait for p's first resolution.
func Waiting(p *Pool) int64 { return p.waiting.Load() }
