package runner

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/ownership"
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
