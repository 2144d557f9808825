package runner

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// exchanges are the repartition streams of a distributed job's keyed exchanges: exchange
// k's partition p is what the tasks of sub-topology k-1 write for task p of sub-topology k.
type exchanges struct {
	parts int
	reps  []*natsjs.Repartition // by exchange; reps[0] is nil
}

// newExchanges creates the job's repartition stream, or checks the one there, and
// describes every exchange of topo on it.
func newExchanges(ctx context.Context, cfg *config.Config, topo *dataflow.Topology, log hclog.Logger) (*exchanges, error) {
	job := topo.Job()
	stream := cfg.Cluster.StreamFor(job.Name)
	if err := natsjs.EnsureRepartitionStream(ctx, natsjs.ConnFromConfig(cfg.NATS), stream, cfg.Cluster.Replicas); err != nil {
		return nil, fmt.Errorf("%s %s: %w", config.KeyClusterStream, stream, err)
	}
	e := &exchanges{parts: job.Parallelism, reps: make([]*natsjs.Repartition, topo.SubTopologies())}
	for k := 1; k < topo.SubTopologies(); k++ {
		x := topo.Exchange(k)
		e.reps[k] = &natsjs.Repartition{
			Conn: natsjs.ConnFromConfig(cfg.NATS), Stream: stream, Job: job.Name, Exchange: k,
			Partitions: job.Parallelism, MaxParallelism: job.MaxParallelism,
			Key: x.Key, Encode: x.Encode, Decode: x.Decode, Logger: log,
		}
	}
	return e, nil
}

// refuseFreshOverFrames refuses a new run of the job (this runner joined alone, and
// restores no savepoint) in which every task would start fresh (no task has a completed
// checkpoint) while the repartition stream holds frames of an earlier run (frames, counted
// when the runner joined): the tasks after the first exchange read their partitions from
// the first frame, and would count that run's records again beside this run's, as the
// JetStream sink refuses to publish output a run it does not restore committed.
func (e *exchanges) refuseFreshOverFrames(ctx context.Context, cfg *config.Config, host *pluginhost.Host, job string, tasks []string, frames uint64) error {
	if len(e.reps) < 2 || frames == 0 {
		return nil
	}
	storage, _, err := manifestStorage(ctx, cfg, host, job)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		access, err := storage.CreateCheckpointStorage(ctx, TaskJobName(job, t))
		if err != nil {
			return fmt.Errorf("checkpoint storage %s: task %s: %w", cfg.CheckpointStorage, t, err)
		}
		list, err := access.ListCompletedCheckpoints(ctx)
		if err != nil {
			return fmt.Errorf("checkpoint storage %s: list the checkpoints of task %s: %w", cfg.CheckpointStorage, t, err)
		}
		if len(list) > 0 {
			return nil
		}
	}
	stream := cfg.Cluster.StreamFor(job)
	return fmt.Errorf("%s %s holds %d frames of an earlier run of job %q, but no task of it has a checkpoint to restore (in %s): "+
		"the tasks would read those frames again beside this run's; restore that run's checkpoints or a savepoint (--from MANIFEST), "+
		"or, to start the job over, delete the stream (nats stream rm %s) and the output the job no longer wants",
		config.KeyClusterStream, stream, frames, job, cfg.Checkpointing.Dir, stream)
}

// source is the reader of exchange k's partition p, which ends once every task of
// sub-topology k-1 has ended.
func (e *exchanges) source(k, p int) dataflow.Source { return e.reps[k].Source(p, e.parts) }

// sink is the writer of task p of sub-topology k-1 into exchange k; its markers carry the
// task's fencing token, the epoch of lease.
func (e *exchanges) sink(k, p int, lease *ownership.Lease) dataflow.Sink {
	r := *e.reps[k]
	r.Epoch = func() int64 { return lease.Record().Epoch }
	return r.Sink(p)
}
