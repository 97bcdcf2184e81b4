package licensing

import (
	"context"
	"errors"
	"time"
)

// The licensed session: Start activates this machine, validates, and keeps a floating seat alive with a
// heartbeat every third of its lease, so that two missed beats still leave the seat; Stop ends the
// heartbeats and releases the seat at once, rather than leaving it taken until the lease lapses.

// AppState is what Start found.
type AppState struct {
	// Activation is this machine's seat.
	Activation Activation
	// Validation is the validation answer for this machine: check Valid before running.
	Validation *Validation
	// Entitlements are the licence's effective feature codes.
	Entitlements []string
	// LeaseSeconds is the policy's lease, or 0 for a node-locked activation (no heartbeats).
	LeaseSeconds int
	// HeartbeatEvery is how often Start's heartbeats run, or 0 when they do not.
	HeartbeatEvery time.Duration
}

// ErrStopped is answered by a Start that a Stop overtook before it took the seat.
var ErrStopped = errors.New("licensing: stopped before the session started")

type session struct {
	interval func(leaseSeconds int) time.Duration
	gate     chan struct{} // held by a Start on its way; Stop waits for it

	epoch  uint64 // moved by every Start and Stop: a Start whose epoch moved starts no heartbeats
	cancel context.CancelFunc
	done   chan struct{} // closed when the heartbeat goroutine has ended
}

// heartbeatInterval is a third of the lease (at least a second).
func heartbeatInterval(leaseSeconds int) time.Duration {
	return max(time.Second, time.Duration(leaseSeconds)*time.Second/3)
}

// Start begins the licensed session: Activate, then Validate (whose licence names the policy's lease),
// then, for a floating seat, a heartbeat every third of the lease on a goroutine until Stop. ctx limits
// the start alone: the heartbeats go on after it ends. Background failures go to AppOptions.OnError and
// LastError. Calling Start again restarts the heartbeats.
//
// It fails when activation fails (every seat taken: a 409 *Error with NextAction free_a_seat) or the
// server is out of reach; a licence that is not valid is an answer: read State.Validation.
func (a *App) Start(ctx context.Context) (*AppState, error) {
	epoch, _ := a.halt()
	select {
	case a.gate <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-a.gate }()
	if !a.sameEpoch(epoch) {
		return nil, ErrStopped
	}
	seat, err := a.Activate(ctx, "")
	if err != nil {
		return nil, err
	}
	v, err := a.Validate(ctx)
	if err != nil {
		return nil, err
	}
	state := &AppState{Activation: *seat, Validation: v, Entitlements: v.Entitlements}
	if v.License != nil && v.License.Policy != nil && v.License.Policy.LeaseSeconds != nil && *v.License.Policy.LeaseSeconds > 0 {
		state.LeaseSeconds = *v.License.Policy.LeaseSeconds
		state.HeartbeatEvery = a.interval(state.LeaseSeconds)
	}
	if now := a.Activation(); now != nil {
		state.Activation = *now
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	// A Stop (or another Start) called meanwhile wins: no heartbeats; Stop releases the seat.
	if a.epoch == epoch && state.HeartbeatEvery > 0 {
		loop, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		a.cancel, a.done = cancel, done
		go a.beat(loop, state.HeartbeatEvery, done)
	}
	return state, nil
}

// Stop ends the session: it stops the heartbeats, waits for a Start or a heartbeat on its way, and
// releases the seat (Deactivate). Safe to call more than once. If the release fails (no network) the
// error is answered and a later Stop tries again; a floating seat left behind lapses by itself.
func (a *App) Stop(ctx context.Context) error {
	_, done := a.halt()
	select {
	case a.gate <- struct{}{}:
		<-a.gate
	case <-ctx.Done():
		return ctx.Err()
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return a.Deactivate(ctx)
}

// IsRunning is true while Start's heartbeats run.
func (a *App) IsRunning() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancel != nil
}

// halt stops the heartbeats and moves the epoch; it answers the new epoch and the stopped goroutine's
// done channel (nil when none ran).
func (a *App) halt() (uint64, chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.epoch++
	if a.cancel != nil {
		a.cancel()
	}
	done := a.done
	a.cancel, a.done = nil, nil
	return a.epoch, done
}

func (a *App) sameEpoch(epoch uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.epoch == epoch
}

// beat heartbeats every `every` until ctx ends, one at a time (each waits for the previous answer).
func (a *App) beat(ctx context.Context, every time.Duration, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		seat, err := a.Heartbeat(ctx)
		if ctx.Err() != nil {
			return // stopped while on its way: not a failure
		}
		a.mu.Lock()
		a.lastErr = err
		a.mu.Unlock()
		if err != nil {
			if a.opts.OnError != nil {
				a.opts.OnError(err)
			}
		} else if a.opts.OnHeartbeat != nil {
			a.opts.OnHeartbeat(*seat)
		}
		timer.Reset(every)
	}
}
