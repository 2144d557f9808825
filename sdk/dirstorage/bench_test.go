package dirstorage

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// BenchmarkWriteThroughput writes a 256 MiB stream in 1 MiB writes through a Storage on the
// local disk (what fsstorage is on file://) and, in the same run, the same bytes to a plain
// os.File (with and without fsync, since the Storage syncs every state file before handing
// out its handle).
func BenchmarkWriteThroughput(b *testing.B) {
	const total, chunk = 256 << 20, 1 << 20
	data := pattern(chunk, 1)
	b.Run("dirstorage", func(b *testing.B) {
		s, _ := newConfigured(b, nil)
		loc := benchLocation(b, s)
		b.SetBytes(total)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h := benchWrite(b, loc, data, total)
			b.StopTimer()
			removeRef(b, s, h)
			b.StartTimer()
		}
	})
	for _, sync := range []bool{false, true} {
		name := "os.File"
		if sync {
			name = "os.File+fsync"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(total)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := filepath.Join(dir, "plain")
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < total; off += chunk {
					if _, err := f.Write(data); err != nil {
						b.Fatal(err)
					}
				}
				if sync {
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				os.Remove(p)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkSmallWrites writes 64 MiB in 200-byte writes with several write buffer sizes:
// the figure behind the default write-buffer-size.
func BenchmarkSmallWrites(b *testing.B) {
	const total, chunk = 64 << 20, 200
	data := pattern(chunk, 2)
	for _, size := range []string{"4kb", "64kb", "256kb", "1mb"} {
		b.Run("buffer="+size, func(b *testing.B) {
			s, _ := newConfigured(b, sdk.Options{OptionWriteBufferSize: size, sdk.OptionDataInlineThreshold: "0"})
			loc := benchLocation(b, s)
			b.SetBytes(total)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h := benchWrite(b, loc, data, total)
				b.StopTimer()
				removeRef(b, s, h)
				b.StartTimer()
			}
		})
	}
}

func benchLocation(b *testing.B, s *Storage) sdk.CheckpointStorageLocation {
	b.Helper()
	a, err := s.CreateCheckpointStorage(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(context.Background()); err != nil {
		b.Fatal(err)
	}
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		b.Fatal(err)
	}
	return loc
}

// benchWrite writes total bytes as repeated data to a new exclusive stream.
func benchWrite(b *testing.B, loc sdk.CheckpointStorageLocation, data []byte, total int) sdk.StreamStateHandle {
	out, err := loc.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeExclusive)
	if err != nil {
		b.Fatal(err)
	}
	for off := 0; off < total; off += len(data) {
		if _, err := out.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	h, err := out.CloseAndGetHandle(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func removeRef(b *testing.B, s *Storage, h sdk.StreamStateHandle) {
	p, err := s.name(h.Ref)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		b.Fatal(err)
	}
}
