package config

import (
	"fmt"
	"os"
	"strings"
)

// Flags of the command line that set configuration keys, as Flink's CLI has them.
const (
	// FlagDynamic is -D key=value (Flink's dynamic properties), repeatable.
	FlagDynamic = "-D"
	// FlagParallelism is -p N: job.parallelism (Flink's parallelism.default).
	FlagParallelism = "-p"
)

// Override is a key set on the command line. Overrides win over the file: a key set by
// -D replaces the file's value, whichever spelling (current, deprecated or Flink alias)
// each uses, and a later override of a key replaces an earlier one (-p comes last).
type Override struct {
	// Flag is FlagDynamic or FlagParallelism.
	Flag string
	// Key and Value are the key and its value as given.
	Key, Value string
}

// ParseDynamic parses the argument of -D, "key=value".
func ParseDynamic(arg string) (Override, error) {
	k, v, ok := strings.Cut(arg, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return Override{}, fmt.Errorf("-D %s: want key=value", arg)
	}
	return Override{Flag: FlagDynamic, Key: k, Value: v}, nil
}

// Parallelism is the override of -p N.
func Parallelism(n string) Override {
	return Override{Flag: FlagParallelism, Key: KeyJobParallelism, Value: n}
}

// String prints the override as it was given, with the values of keys that hold secrets
// masked (as Flink masks them in its logs).
func (o Override) String() string {
	v := o.Value
	if secretKey(o.Key) {
		v = "******"
	}
	if o.Flag == FlagParallelism {
		return FlagParallelism + " " + v
	}
	return fmt.Sprintf("%s %s=%s", o.Flag, o.Key, v)
}

// secretKey reports whether a key's value must not be printed: Flink's list of sensitive
// key fragments (GlobalConfiguration.SENSITIVE_KEYS).
func secretKey(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "secret", "fs.azure.account.key", "apikey", "api-key", "auth-params", "service-key", "token", "basic-auth", "jaas.config", "http-headers"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// LoadWith reads, parses and validates a configuration file with command-line overrides.
func LoadWith(path string, overrides []Override) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseWith(data, path, overrides)
}

// overrideLeaves turns overrides into leaves after the file's, in order.
func overrideLeaves(overrides []Override) []leaf {
	out := make([]leaf, 0, len(overrides))
	for _, o := range overrides {
		out = append(out, leaf{key: o.Key, value: o.Value, flag: o.Flag})
	}
	return out
}
