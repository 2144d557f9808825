package config

import "fmt"

// Provenance records where the keys of a configuration were set: the line of each key in
// the file, the command-line flag (-D, -p) that set a key instead, the spelling the file
// wrote for each current key, and what chose the state backend and the checkpoint storage.
// Keys are looked up by the key as written or by its current name. Parse fills it; Config
// embeds it, so that c.Line(key) and c.Locate(key) read it.
type Provenance struct {
	file    string
	lines   map[string]int    // written and canonical key -> line
	flags   map[string]string // written and canonical key -> the flag that set it
	written map[string]string // canonical key -> the key as written
	// backendSrc and storageSrc say what chose the plugins (StateBackendSource,
	// CheckpointStorageSource).
	backendSrc, storageSrc string
}

// newProvenance returns the provenance of a configuration of file that sets nothing.
func newProvenance(file string) Provenance {
	return Provenance{file: file, lines: map[string]int{}, flags: map[string]string{}, written: map[string]string{}, backendSrc: "default"}
}

// IsSet reports whether the file or the command line sets a key (by its current name).
func (p *Provenance) IsSet(key string) bool { return p.lines[key] > 0 || p.flags[key] != "" }

// Line returns the line of a key in the file, by the key as written or by its current name
// (so Line("state.backend.type") finds a deprecated state.backend); 0 when the key is not
// from the file.
func (p *Provenance) Line(key string) int { return p.lines[key] }

// Where says where a key was set, to start a message about it: "FILE:LINE" for a key of the
// file, the flag that set it ("-D") for the command line, else "FILE".
func (p *Provenance) Where(key string) string {
	if f := p.flags[key]; f != "" {
		return f
	}
	if l := p.lines[key]; l > 0 {
		return fmt.Sprintf("%s:%d", fileName(p.file), l)
	}
	return fileName(p.file)
}

// Locate names a key (as returned by OptionKey, say) where it was set, to start a message:
// "FILE:LINE: KEY", "-D KEY" for a key set on the command line, or "FILE: KEY".
func (p *Provenance) Locate(key string) string {
	if f := p.flags[key]; f != "" {
		return f + " " + key
	}
	return p.Where(key) + ": " + key
}

// Written returns the key as the file wrote it for a current key name (a deprecated or
// Flink spelling, say), or the name itself when the file does not set it.
func (p *Provenance) Written(canonical string) string {
	if w, ok := p.written[canonical]; ok {
		return w
	}
	return canonical
}

// StateBackendSource says what chose the state backend: "code", "config file",
// "command line (-D)" or "default".
func (p *Provenance) StateBackendSource() string { return p.backendSrc }

// CheckpointStorageSource says what chose the checkpoint storage: "code", "config file",
// "the deprecated state.backend: filesystem", "the state backend, which also implements
// CheckpointStorage", "default: a checkpoint dir is set" or "default".
func (p *Provenance) CheckpointStorageSource() string { return p.storageSrc }
