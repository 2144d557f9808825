package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// set applies the value of a current key.
func (p *parser) set(key string, v any) {
	c := p.c
	switch key {
	case KeyCheckpointStorage:
		c.storageSet, c.storageSrc, p.storageGiven = v.(string), "config file", true
	case KeyCheckpointDir:
		c.Checkpointing.Dir = v.(string)
	case KeySavepointDir:
		c.Checkpointing.SavepointDir = v.(string)
	case KeyInterval:
		c.Checkpointing.Interval = v.(time.Duration)
	case KeyTimeout:
		c.Checkpointing.Timeout = v.(time.Duration)
		if c.Checkpointing.Timeout == 0 {
			p.badValue(key, "the checkpoint timeout must be positive")
		}
	case KeyNumRetained:
		c.Checkpointing.NumRetained = int(v.(int64))
	case KeyTolerableFailed:
		c.Checkpointing.TolerableFailed = int(v.(int64))
	case KeyIncremental:
		c.Checkpointing.Incremental, c.incrSet = v.(bool), true
	case KeyDataInlineThreshold:
		c.Checkpointing.DataInlineThreshold, c.inlineSet = v.(int64), true
	case KeySharedFilesystem:
		c.Checkpointing.SharedFilesystem = v.(bool)
	case KeyCheckpointingMode:
		c.Checkpointing.Mode = v.(string)
	case KeyMinPause:
		c.Checkpointing.MinPause = v.(time.Duration)
	case KeyMaxConcurrent:
		c.Checkpointing.MaxConcurrent = int(v.(int64))
	case KeyRetention:
		c.Checkpointing.Retention = v.(string)
	case KeyRecoveryPath:
		c.Recovery.Path = v.(string)
	case KeyClaimMode:
		c.Recovery.ClaimMode = v.(string)
		if c.Recovery.ClaimMode == ClaimLegacy {
			p.deprecate(p.spellingOf(key), fmt.Sprintf("%s: LEGACY is deprecated (Flink 2.0 removed it): use NO_CLAIM or CLAIM", c.Written(key)))
		}
	case KeyIgnoreUnclaimed:
		c.Recovery.IgnoreUnclaimedState = v.(bool)
	case KeyPluginsDir:
		c.Plugins.Dir = v.(string)
	case KeyJobName:
		c.Job.Name = v.(string)
		if err := CheckJobName(c.Job.Name); err != nil {
			p.badValue(key, err.Error()+" (the name is the job's directory in the checkpoint storage)")
		}
	case KeyJobType:
		c.Job.Type = v.(string)
	case KeyJobParallelism:
		c.Job.Parallelism = int(v.(int64))
	case KeyJobMaxParallelism:
		c.Job.MaxParallelism = int(v.(int64))
	case KeyJobInput:
		c.Job.Input = v.(string)
	case KeyJobOutput:
		c.Job.Output = v.(string)
	case KeyJobRate:
		c.Job.Rate = v.(float64)
	case KeyJobKeys:
		c.Job.Keys = v.(int64)
	case KeyJobRecords:
		c.Job.Records = v.(int64)
	case KeyJobBatchSize:
		c.Job.BatchSize = int(v.(int64))
	case KeyStartOverOnLoss:
		c.Restart.StartOverOnCheckpointLoss = v.(bool)
	case KeyCancellationTimeout:
		c.Restart.CancellationTimeout = v.(time.Duration)
	case KeyLeaseTimeout:
		c.Job.LeaseTimeout = v.(time.Duration)
		if c.Job.LeaseTimeout < MinLeaseTimeout {
			p.badValue(key, fmt.Sprintf("the lease timeout must be at least %s", MinLeaseTimeout))
		}
	case KeyHeartbeatInterval:
		c.Heartbeat.Interval = v.(time.Duration)
	case KeyHeartbeatTimeout:
		c.Heartbeat.Timeout = v.(time.Duration)
	case KeyMemoryLimit:
		c.Memory.Limit = v.(int64)
	case KeyMemoryGOGC:
		n, err := ParseGOGC(v.(string))
		if err != nil {
			p.badValue(key, err.Error())
		}
		c.Memory.GOGC = n
	case KeyAllowOutsideDir:
		c.Plugins.AllowOutsideDir = splitList(v.(string))
	case KeyRestAddress:
		p.address = v.(string)
	case KeyRestPort:
		p.port = strconv.FormatInt(v.(int64), 10)
	case KeyRestTokenFile:
		c.Control.TokenFile = v.(string)
	case KeyRestOpenReads:
		b := v.(bool)
		c.Control.OpenReads = &b
	case KeyRestAllowedHosts:
		c.Control.AllowedHosts = splitList(v.(string))
	case KeyRestSSLCert:
		c.Control.CertFile = v.(string)
	case KeyRestSSLKey:
		c.Control.KeyFile = v.(string)
	case KeyRestSSLTrust:
		c.Control.TrustFile = v.(string)
	case KeyRestPlaintextRisk:
		c.Control.AcceptPlaintextRisk = v.(bool)
	case KeyAllowAnySavepointTarget:
		c.Control.AllowAnySavepointTarget = v.(bool)
	default:
		if !p.setConnector(key, v) && !p.setCluster(key, v) {
			p.setRestart(key, v)
		}
	}
}

// splitList returns the non-empty items of a comma-separated list.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// badValue reports a value of key that parses but is not allowed.
func (p *parser) badValue(key, why string) {
	p.errs.addAt(p.c.File, p.spellingOf(key), fmt.Errorf("%w %q: %s", ErrBadValue, masked(key, p.valueOf(key)), why))
}

// masked returns value as messages print it: "******" for a key that holds a secret.
func masked(key, value string) string {
	if secretKey(key) {
		return "******"
	}
	return value
}

// spellingOf returns the leaf of the winning spelling of a current key.
func (p *parser) spellingOf(key string) leaf {
	return leaf{key: p.c.Written(key), line: p.c.lines[key], flag: p.c.flags[key]}
}

// valueOf is the value of a current key as written, for messages.
func (p *parser) valueOf(key string) string { return p.raw[key] }

// finish applies the rules that involve several keys.
func (p *parser) finish() {
	c := p.c
	if c.Job.MaxParallelism < c.Job.Parallelism {
		key := KeyJobMaxParallelism
		if c.lines[key] == 0 && c.flags[key] == "" {
			key = KeyJobParallelism
		}
		p.errs.addAt(c.File, p.spellingOf(key), fmt.Errorf("%w: job.parallelism (%d) exceeds job.max-parallelism (%d)",
			ErrBadValue, c.Job.Parallelism, c.Job.MaxParallelism))
	}
	if h := c.Heartbeat; h.Interval <= 0 || h.Timeout <= h.Interval {
		key := KeyHeartbeatTimeout
		if c.lines[key] == 0 && c.flags[key] == "" {
			key = KeyHeartbeatInterval
		}
		p.errs.addAt(c.File, p.spellingOf(key), fmt.Errorf("%w: heartbeat.interval (%s) must be positive and below heartbeat.timeout (%s)",
			ErrBadValue, h.Interval, h.Timeout))
	}
	if p.address != "" || p.port != "" {
		host, port := DefaultRestAddress, strconv.Itoa(DefaultRestPort)
		if p.address != "" {
			host = p.address
		}
		if p.port != "" {
			port = p.port
		}
		c.Control.Address = net.JoinHostPort(host, port)
	}
	p.checkControl()
	p.checkInputOutput()
	p.checkConnectors()
	p.checkCluster()
	p.finishRestart()
	p.finishBackend()
	for _, s := range p.flinkLeaves {
		p.flinkLeaf(s, c.StateBackend)
	}
}

// finishBackend applies the seed's Old -> New table to a deprecated state.backend value and
// writes the state backend's deprecation messages.
func (p *parser) finishBackend() {
	c := p.c
	for _, s := range p.backendAll {
		v, _ := parseBackendName(s.value, s.info.deprecated)
		legacy := v.legacy
		if legacy == nil {
			if s.info.deprecated {
				p.deprecate(s.leaf, fmt.Sprintf("%s is deprecated: use %s", s.key, KeyStateBackend))
			}
			continue
		}
		storage := legacy.storage
		if storage == storageAuto {
			storage = JMStorage
			if c.Checkpointing.Dir != "" {
				storage = FSStorage
			}
		}
		p.deprecate(s.leaf, fmt.Sprintf("%s: %s is deprecated: use %s: %s and %s: %s (%s)",
			s.key, strings.TrimSpace(s.value), KeyStateBackend, legacy.backend, KeyCheckpointStorage, storage, legacy.flink))
	}
	lb := p.backendLegacy
	if lb == nil {
		return
	}
	what := fmt.Sprintf("%s: %s", p.backend.key, strings.TrimSpace(p.backend.value))
	if p.storageGiven {
		// rocksdb never fixed its storage; jobmanager and filesystem did.
		if lb.storage != storageAuto && c.storageSet != lb.storage {
			c.warnf("%s: %s implies %s checkpoint storage, but %s (%s) selects %s; using %s",
				c.Where(KeyStateBackend), what, lb.storage, c.Written(KeyCheckpointStorage), p.origin(p.spellingOf(KeyCheckpointStorage)), c.storageSet, c.storageSet)
		}
		return
	}
	c.storageImpl = what
	c.storageSrc = "the deprecated " + what
	if lb.storage == storageAuto {
		c.storageAuto = true
	} else {
		c.storageSet = lb.storage
	}
}
