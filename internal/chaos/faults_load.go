package chaos

import (
	"context"
	"fmt"
	"time"
)

// Faults under load.
const (
	FaultLoadKillAccelerated      = "load-kill-accelerated"
	FaultLoadKillMaterialized     = "load-kill-materialized"
	FaultOverload                 = "overload"
	FaultOverloadKillAccelerated  = "overload-kill-accelerated"
	FaultOverloadKillMaterialized = "overload-kill-materialized"
)

// DefaultLoadRate is the load rounds' write rate; pass 80% of the whole
// chain's sustained rate that the write benchmark finds with --load-rate.
const DefaultLoadRate = 170

// Overload settings: writes at OverloadFactor times the load rate for
// overloadHold, then at the run's rate again; a kill while behind waits up
// to behindWait for the runtime to fall behindBytes of WAL behind.
const (
	OverloadFactor = 2
	overloadHold   = 60 * time.Second
	behindWait     = 30 * time.Second
	behindBytes    = 64 << 10
)

// Load is a round's write rates.
type Load struct {
	Rate     float64 // orders per second outside the overload (the round's base rate)
	Overload float64 // orders per second between Inject and Heal; zero for none
}

func loadFaults(set Settings) []Fault {
	load, over, normal := set.LoadRate, OverloadFactor*set.LoadRate, set.WriteRate
	overload := func(inject func(context.Context, *Env) error) func(context.Context, *Env) error {
		return func(ctx context.Context, e *Env) error {
			e.Workload.SetRate(over)
			if inject == nil {
				return nil
			}
			return inject(ctx, e)
		}
	}
	back := func(ctx context.Context, e *Env) error { e.Workload.SetRate(normal); return nil }
	readSide := []string{EndpointAccelerated, EndpointMaterialized}
	return []Fault{
		{
			Name:        FaultLoadKillAccelerated,
			Description: fmt.Sprintf("SIGKILL the accelerated runtime with %.0f orders/s written, start it again", load),
			Allowed:     readSide,
			Load:        &Load{Rate: load},
			Inject:      killService(ServiceAccelerated),
			Heal:        startService(ServiceAccelerated),
			Restarts:    ServiceAccelerated,
		},
		{
			Name:        FaultLoadKillMaterialized,
			Description: fmt.Sprintf("SIGKILL the materialized runtime with %.0f orders/s written, start it again", load),
			Allowed:     []string{EndpointMaterialized},
			Load:        &Load{Rate: load},
			Inject:      killService(ServiceMaterialized),
			Heal:        startService(ServiceMaterialized),
			Restarts:    ServiceMaterialized,
		},
		{
			Name: FaultOverload,
			Description: fmt.Sprintf("write %.0f orders/s (%dx the load rate) for %s, then %.0f/s: "+
				"Recover is the catch-up", over, OverloadFactor, overloadHold, normal),
			Allowed: readSide, // a reader with a token may wait out a lagging runtime (504)
			Load:    &Load{Rate: normal, Overload: over},
			Inject:  overload(nil),
			Hold:    overloadHold,
			Heal:    back,
		},
		killBehind(FaultOverloadKillAccelerated, ServiceAccelerated, readSide, over, normal, overload, back),
		killBehind(FaultOverloadKillMaterialized, ServiceMaterialized, []string{EndpointMaterialized}, over, normal, overload, back),
	}
}

// killBehind overloads the stack, waits for service to fall behind, SIGKILLs
// and starts it, and keeps the overload on for half of overloadHold more.
func killBehind(name, service string, allowed []string, over, normal float64,
	overload func(func(context.Context, *Env) error) func(context.Context, *Env) error,
	back func(context.Context, *Env) error) Fault {
	return Fault{
		Name: name,
		Description: fmt.Sprintf("write %.0f orders/s; once the %s runtime is %d KiB of WAL behind (at most %s), "+
			"SIGKILL it and start it again; %.0f/s again %s later", over, service, behindBytes>>10, behindWait, normal, overloadHold/2),
		Allowed: allowed,
		Load:    &Load{Rate: normal, Overload: over},
		Inject: overload(func(ctx context.Context, e *Env) error {
			behind := pollEvery(ctx, behindWait, 200*time.Millisecond, service+" to fall behind", func() bool {
				s, ok := e.Client.Sample(ctx, service, e.Workload.Token())
				return ok && s.Behind >= behindBytes
			}) == nil
			if !behind {
				e.Note(fmt.Sprintf("%s was not %d KiB behind within %s: killed anyway", service, behindBytes>>10, behindWait))
			}
			if err := killService(service)(ctx, e); err != nil {
				return err
			}
			return startService(service)(ctx, e)
		}),
		Hold: overloadHold / 2,
		Heal: back,
	}
}
