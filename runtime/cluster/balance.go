package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/ownership"
)

// Plan is what one Balance did and asks for.
type Plan struct {
	// Members is the number of live members, this one included.
	Members int
	// Share is the most tasks a member may hold: ceil(tasks / members).
	Share int
	// Claimed are the tasks this call claimed.
	Claimed []string
	// HandOver are tasks the member holds beyond its share: it should checkpoint them
	// and Release them, so that a member short of its share can claim them.
	HandOver []string
}

// Balance claims free tasks until the member holds its fair share, and names the tasks
// it should hand over. A member whose own lease is not valid (frozen or cut off past its
// margin) claims nothing, nor does one within Settings.Settle of joining; a task marked
// finished is never claimed.
func (g *Group) Balance(ctx context.Context) (Plan, error) {
	if err := g.member.Check(); err != nil {
		return Plan{}, fmt.Errorf("member %s of job %q: %w", g.id, g.s.Job, err)
	}
	now := g.clock().Now()
	members, err := g.liveMembers(ctx, now)
	if err != nil {
		return Plan{}, err
	}
	owners, err := g.owners(ctx, now)
	if err != nil {
		return Plan{}, err
	}
	finished, err := g.Finished(ctx)
	if err != nil {
		return Plan{}, err
	}
	n, total := len(members), len(g.s.Tasks)
	plan := Plan{Members: n, Share: (total + n - 1) / n}
	floor := total / n
	settling := now.Sub(g.joined) < g.s.Settle

	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropLostLocked()
	// Claim free tasks, starting at a place of the task list of the member's own, so
	// that members joining together try different tasks first.
	start := slices.Index(members, g.id) * plan.Share
	for i := range total {
		if len(g.held) >= plan.Share || settling {
			break
		}
		t := g.s.Tasks[(start+i)%total]
		if _, mine := g.held[t]; mine {
			continue
		}
		if _, taken := owners[t]; taken || finished[t] {
			continue
		}
		l, err := ownership.Acquire(ctx, g.tasks[t], g.holder, g.opts("task "+t))
		var held *ownership.HeldError
		if errors.As(err, &held) {
			continue // claimed by another member since it was read
		}
		if err != nil {
			return plan, fmt.Errorf("claim task %q of job %q: %w", t, g.s.Job, err)
		}
		g.held[t] = l
		owners[t] = g.id
		plan.Claimed = append(plan.Claimed, t)
		g.log.Info("claimed a task", "task", t, "epoch", l.Record().Epoch)
	}
	// Hand over what is beyond the share, or one task while another member is short.
	counts := map[string]int{}
	for _, m := range owners {
		counts[m]++
	}
	short := false
	for _, m := range members {
		if counts[m] < floor {
			short = true
		}
	}
	over := len(g.held) - plan.Share
	if over <= 0 && short && len(g.held) > floor {
		over = 1
	}
	if over > 0 {
		mine := make([]string, 0, len(g.held))
		for t := range g.held {
			mine = append(mine, t)
		}
		slices.Sort(mine)
		plan.HandOver = mine[len(mine)-over:]
	}
	return plan, nil
}

// counts reports whether a live member record counts for the shares: its holder is not
// known to have ended (ownership.Dead: a runner of this machine whose process is gone),
// and it renewed its record within two renewal periods. A killed or frozen member thus
// drops out of the shares before its leases expire, so that the others do not hand tasks
// over to a member that will never claim them.
func (g *Group) counts(rec ownership.Record, now time.Time) bool {
	if dead, _ := ownership.Dead(rec.Holder, rec.Renewed); dead {
		return false
	}
	return now.Sub(rec.Renewed) < 2*ownership.RenewEvery(rec.TTL())
}

// liveMembers returns the ids of the members that count for the shares, sorted, this one
// included.
func (g *Group) liveMembers(ctx context.Context, now time.Time) ([]string, error) {
	prefix := memberPrefix(g.s.Job)
	keys, err := listKeys(ctx, g.kv, prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("list the members of job %q (KV bucket %s): %w", g.s.Job, g.s.Bucket, err)
	}
	ids := []string{g.id}
	for _, key := range keys {
		id := strings.TrimPrefix(key, prefix)
		if id == g.id {
			continue
		}
		l, ok := g.others[key]
		if !ok {
			if l, err = natsjs.OpenKVLease(ctx, g.s.JS, g.s.Bucket, key, 0); err != nil {
				return nil, fmt.Errorf("member %s of job %q: %w", id, g.s.Job, err)
			}
			g.others[key] = l
		}
		rec, live, err := readRecord(ctx, l, now)
		if err != nil {
			return nil, fmt.Errorf("member %s of job %q: %w", id, g.s.Job, err)
		}
		if live && rec.Member == id && g.counts(rec, now) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// owners returns the member holding each task whose record is live, unless its holder is
// known to have ended (Acquire takes such a task over at once).
func (g *Group) owners(ctx context.Context, now time.Time) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range g.s.Tasks {
		rec, live, err := readRecord(ctx, g.tasks[t], now)
		if err != nil {
			return nil, fmt.Errorf("task %q of job %q: %w", t, g.s.Job, err)
		}
		if dead, _ := ownership.Dead(rec.Holder, rec.Renewed); live && !dead {
			out[t] = rec.Member
		}
	}
	return out, nil
}
