package redlock

import "time"

// The acquire family and the election calls take what may be left out as named options, never
// as a second value of a type beside it: Acquire(ctx, resource, ttl, wait) took two Durations
// in a row, which compiled just as well swapped, and Campaign(ctx, election, value, ttl) two
// strings. A ttl stays positional: it is required, and no neighbour has its type.

// AcquireOption changes how Acquire, AcquirePermit, WithLock and WithPermit take a lease.
type AcquireOption func(*acquireConfig)

type acquireConfig struct {
	wait time.Duration
}

// WithWait makes the acquire wait up to d while someone else holds the lock (every permit, for
// a permit) instead of giving up after one attempt. The wait is the server's: it grants the
// moment the lock is free. A negative d is refused INVALID_ARGUMENT by the server.
func WithWait(d time.Duration) AcquireOption {
	return func(c *acquireConfig) { c.wait = d }
}

func acquireOptions(opts []AcquireOption) acquireConfig {
	var cfg acquireConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// LeadOption changes how Lead runs: Requeue, or any CampaignOption.
type LeadOption interface {
	applyLead(*leadConfig)
}

// CampaignOption changes how Campaign (and Lead) campaign: WithValue.
type CampaignOption interface {
	LeadOption
	applyCampaign(*campaignConfig)
}

type campaignConfig struct {
	value string
}

type leadConfig struct {
	campaign []CampaignOption
	requeue  bool
}

// WithValue makes value what Leader and Observe report while this candidate leads (an address,
// say; at most 256 UTF-8 bytes, or the server refuses it INVALID_ARGUMENT). Without it the value
// is empty.
func WithValue(value string) CampaignOption {
	return valueOption(value)
}

type valueOption string

func (v valueOption) applyCampaign(c *campaignConfig) { c.value = string(v) }
func (v valueOption) applyLead(c *leadConfig)         { c.campaign = append(c.campaign, v) }

// Requeue makes Lead campaign again after a lost leadership and run work again once it leads,
// until ctx ends (Curator's autoRequeue). Without it, a loss ends Lead with the loss error.
func Requeue() LeadOption {
	return requeueOption{}
}

type requeueOption struct{}

func (requeueOption) applyLead(c *leadConfig) { c.requeue = true }

func campaignOptions(opts []CampaignOption) campaignConfig {
	var cfg campaignConfig
	for _, o := range opts {
		o.applyCampaign(&cfg)
	}
	return cfg
}
