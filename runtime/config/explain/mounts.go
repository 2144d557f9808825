package explain

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/sdk/layout"
)

// mountsFile lists the mounted file systems; tests point it at a fixture.
var mountsFile = "/proc/mounts"

// mount is the file system a path is on.
type mount struct {
	point  string
	fsType string
}

// mountOf returns the mount holding path (which need not exist yet), by the longest mount
// point that contains it; ok is false when the mount table cannot be read.
func mountOf(path string) (m mount, ok bool) {
	data, err := os.ReadFile(mountsFile)
	if err != nil {
		return mount{}, false
	}
	// The symlinks of the deepest existing ancestor resolved; a path that cannot be (a
	// dangling link on the way) stays as written.
	p := filepath.Clean(path)
	if r, err := layout.RealPath(p); err == nil {
		p = r
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		point := unescapeMount(f[1])
		if !layout.Within(point, p) {
			continue
		}
		// Later entries mounted over earlier ones at the same point win.
		if !ok || len(point) >= len(m.point) {
			m, ok = mount{point: point, fsType: f[2]}, true
		}
	}
	return m, ok
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// networkFS reports whether a file system type is a network or remote one: storage that may
// outlive this machine but is slow and unsuitable for a state backend's working files.
func networkFS(fsType string) bool {
	switch fsType {
	case "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "lustre", "afs", "gpfs", "beegfs", "fuse":
		return true
	}
	return strings.HasPrefix(fsType, "fuse.")
}

// memoryFS reports whether a file system keeps its files in memory.
func memoryFS(fsType string) bool { return fsType == "tmpfs" || fsType == "ramfs" }
