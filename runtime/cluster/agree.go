package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// agree makes the group's members run one job: the first member to join records what
// must be the same for all of them (the job's graph, its tasks, its checkpoint storage;
// Settings.Agree plus the task list) on key <job>.config, by a create only one member
// can win, and every later member compares its own with it and is refused, naming each
// setting that differs. The record stays while the bucket keeps it: a job run again
// with other settings needs the key deleted (nats kv del <bucket> <job>.config) once no
// member runs.
func (g *Group) agree(ctx context.Context) error {
	mine := maps.Clone(g.s.Agree)
	if mine == nil {
		mine = map[string]string{}
	}
	mine["tasks"] = strings.Join(g.s.Tasks, ",")
	b, err := json.Marshal(mine)
	if err != nil {
		return err
	}
	key := g.s.Job + ".config"
	if _, err := g.kv.Create(ctx, key, b); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("record the settings of job %q on key %s of KV bucket %s: %w", g.s.Job, key, g.s.Bucket, err)
	}
	e, err := g.get(ctx, key)
	if err != nil {
		return fmt.Errorf("read the settings of job %q on key %s of KV bucket %s: %w", g.s.Job, key, g.s.Bucket, err)
	}
	var theirs map[string]string
	if err := json.Unmarshal(e.Value, &theirs); err != nil {
		return fmt.Errorf("the settings of job %q on key %s of KV bucket %s do not decode: %w", g.s.Job, key, g.s.Bucket, err)
	}
	var diffs []string
	names := slices.Sorted(maps.Keys(mine))
	for _, n := range slices.Sorted(maps.Keys(theirs)) {
		if _, ok := mine[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if mine[n] != theirs[n] {
			diffs = append(diffs, fmt.Sprintf("%s is %q here, %q in the group", n, mine[n], theirs[n]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("this runner's configuration of job %q disagrees with the group's (recorded on key %s of KV bucket %s by its first member): %s; start every runner of the job with the same configuration",
			g.s.Job, key, g.s.Bucket, strings.Join(diffs, "; "))
	}
	return nil
}
