package ranking

// Waiting returns how many reads of req wait for f's next call (Coalesce).
func Waiting(f *Flight, req Request) int { return f.calls.waiting(req) }
