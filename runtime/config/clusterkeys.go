package config

import (
	"fmt"
	"strings"
)

// Keys of distributed mode (cluster.*), Flowstate's own: any number of runners started
// with the same configuration run one job together, coordinated through NATS (the nats.*
// keys say where).
const (
	KeyClusterEnabled  = "cluster.enabled"
	KeyClusterBucket   = "cluster.kv-bucket"
	KeyClusterReplicas = "cluster.replicas"
	KeyClusterStream   = "cluster.repartition.stream"
)

// Defaults of the cluster keys.
const (
	DefaultClusterBucket   = "flowstate"
	DefaultClusterReplicas = 1
	// ClusterStreamPrefix starts the default name of a job's repartition stream,
	// followed by the job's name.
	ClusterStreamPrefix = "flowstate-"
)

// Cluster holds the cluster.* settings: distributed mode.
type Cluster struct {
	// Enabled runs the job in distributed mode: this runner joins the job's group of
	// runners on NATS and runs its share of the job's tasks (default false: the runner
	// runs the whole job alone).
	Enabled bool
	// Bucket is the NATS KV bucket of the group's leases; it must exist (default
	// "flowstate").
	Bucket string
	// Replicas is how many replicas the bucket must have, and the repartition stream is
	// created with (default 1; 3 on a production cluster of three or more servers).
	Replicas int
	// Stream is the job's repartition stream ("" for ClusterStreamPrefix + job name).
	Stream string
}

// StreamFor returns the repartition stream of job: Stream, or the default name.
func (c Cluster) StreamFor(job string) string {
	if c.Stream != "" {
		return c.Stream
	}
	return ClusterStreamPrefix + job
}

var clusterKeys = map[string]keyDef{
	KeyClusterEnabled:  {kind: kindBool},
	KeyClusterBucket:   {kind: kindString},
	KeyClusterReplicas: {kind: kindInt, min: 1, max: 5},
	KeyClusterStream:   {kind: kindString},
}

func init() {
	for k, d := range clusterKeys {
		currentKeys[k] = d
	}
}

// setCluster applies the value of a cluster key; false when key is none.
func (p *parser) setCluster(key string, v any) bool {
	c := p.c
	switch key {
	case KeyClusterEnabled:
		c.Cluster.Enabled = v.(bool)
	case KeyClusterBucket:
		c.Cluster.Bucket = v.(string)
		if err := checkNATSName(c.Cluster.Bucket); err != nil {
			p.badValue(key, "a KV bucket name "+err.Error())
		}
	case KeyClusterReplicas:
		c.Cluster.Replicas = int(v.(int64))
	case KeyClusterStream:
		c.Cluster.Stream = v.(string)
		if err := checkNATSName(c.Cluster.Stream); err != nil {
			p.badValue(key, "a stream name "+err.Error())
		}
	default:
		return false
	}
	return true
}

// checkNATSName reports why name cannot name a JetStream stream or KV bucket.
func checkNATSName(name string) error {
	if name == "" {
		return fmt.Errorf("must not be empty")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("may hold only ASCII letters, digits, '_' and '-', not %q", r)
		}
	}
	return nil
}

// checkCluster applies the rules between the cluster keys and the others: distributed
// mode needs NATS, and a job name that can be one token of a NATS subject.
func (p *parser) checkCluster() {
	c := p.c
	if !c.Cluster.Enabled {
		return
	}
	at := func(key string, err error) {
		p.errs.addAt(c.File, p.spellingOf(key), fmt.Errorf("%w: %s: %v", ErrBadValue, c.Written(key), err))
	}
	if len(c.NATS.Servers) == 0 {
		at(KeyClusterEnabled, fmt.Errorf("distributed mode needs %s: the runners of the job meet on NATS", KeyNATSServers))
	}
	if name := c.Job.Name; strings.ContainsAny(name, ".") {
		at(KeyJobName, fmt.Errorf("in distributed mode (%s) the job name is a token of NATS subjects and keys, which holds no '.'", KeyClusterEnabled))
	}
}
