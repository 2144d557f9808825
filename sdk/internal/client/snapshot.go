package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// writeSnapshotOnPlugin runs sdk.Snapshot.Write of snapshot id in the plugin, serving the
// streams it opens from the host's factory.
func writeSnapshotOnPlugin(ctx context.Context, c pb.StateBackendClient, id uint64, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.SnapshotWrite(ctx)
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	// Send errors show up as the error of the next Recv.
	adopter, _ := streams.(sdk.RemoteFileAdopter)
	_ = st.Send(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Start{Start: &pb.SnapshotWriteStart{SnapshotId: id, AdoptsRemoteFiles: adopter != nil}}})
	open := map[uint64]sdk.CheckpointStateOutputStream{}
	failed := map[uint64]error{}
	files := localFiles{f: map[uint64]localFile{}}
	files.factory, _ = streams.(sdk.LocalStateFactory)
	defer func() {
		for _, out := range open {
			_ = out.Close()
		}
		files.discardAll(ctx)
	}()
	reply := func(m *pb.SnapshotWriteHostMessage) { _ = st.Send(m) }
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("snapshot write: the plugin ended it without a result")
		}
		if err != nil {
			return nil, convert.Errors.FromStatus(err)
		}
		switch x := m.Msg.(type) {
		case *pb.SnapshotWritePluginMessage_Open:
			sid := x.Open.StreamId
			if x.Open.LocalOk {
				path, err := files.create(ctx, sid, convert.ScopeFromProto(x.Open.Scope))
				if err != nil || path != "" {
					reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Opened{Opened: &pb.StreamOpened{StreamId: sid, Error: convert.Errors.ToProto(err), LocalPath: path}}})
					continue
				}
			}
			var out sdk.CheckpointStateOutputStream
			if streams == nil {
				err = fmt.Errorf("snapshot write: no stream factory given: %w", sdk.ErrInvalidArgument)
			} else {
				out, err = streams.CreateCheckpointStateOutputStream(ctx, convert.ScopeFromProto(x.Open.Scope))
			}
			if err == nil {
				open[sid] = out
			}
			reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Opened{Opened: &pb.StreamOpened{StreamId: sid, Error: convert.Errors.ToProto(err)}}})
		case *pb.SnapshotWritePluginMessage_Chunk:
			sid := x.Chunk.StreamId
			out := open[sid]
			if out == nil {
				continue // failed before: the plugin learns it from StreamFailed
			}
			if _, err := out.Write(x.Chunk.Data); err != nil {
				_ = out.Close()
				delete(open, sid)
				failed[sid] = err
				reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Failed{Failed: &pb.StreamFailed{StreamId: sid, Error: convert.Errors.ToProto(err)}}})
			}
		case *pb.SnapshotWritePluginMessage_Close:
			sid := x.Close.StreamId
			if f, ok := files.take(sid); ok {
				if !x.Close.Keep {
					_ = files.factory.DiscardLocalStateFile(ctx, f.path)
					continue
				}
				closed := &pb.StreamClosed{StreamId: sid}
				h, err := files.factory.PublishLocalStateFile(ctx, f.path, f.scope, x.Close.Size, x.Close.Checksum)
				if err != nil {
					closed.Error = convert.Errors.ToProto(err)
				} else {
					closed.Handle = convert.StreamHandleToProto(h)
				}
				reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Closed{Closed: closed}})
				continue
			}
			out := open[sid]
			delete(open, sid)
			ferr := failed[sid]
			delete(failed, sid)
			if !x.Close.Keep {
				if out != nil {
					_ = out.Close()
				}
				continue
			}
			closed := &pb.StreamClosed{StreamId: sid}
			switch {
			case out != nil:
				h, err := out.CloseAndGetHandle(ctx)
				if err != nil {
					closed.Error = convert.Errors.ToProto(err)
				} else {
					closed.Handle = convert.StreamHandleToProto(h)
				}
			case ferr != nil:
				closed.Error = convert.Errors.ToProto(ferr)
			default:
				closed.Error = convert.Errors.ToProto(fmt.Errorf("state stream %d is not open: %w", sid, sdk.ErrInvalidArgument))
			}
			reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Closed{Closed: closed}})
		case *pb.SnapshotWritePluginMessage_Adopt:
			reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Adopted{Adopted: adoptFiles(ctx, adopter, x.Adopt)}})
		case *pb.SnapshotWritePluginMessage_Done:
			_ = st.CloseSend()
			for {
				if _, err := st.Recv(); err != nil {
					break
				}
			}
			if err := convert.Errors.FromProto(x.Done.Error); err != nil {
				return nil, err
			}
			return convert.KeyedHandlesFromProto(x.Done.Handles), nil
		}
	}
}

// adoptFiles answers a plugin's AdoptFiles with the host's adopter (nil: the host offered
// none, and the plugin should not have asked).
func adoptFiles(ctx context.Context, adopter sdk.RemoteFileAdopter, m *pb.AdoptFiles) *pb.FilesAdopted {
	out := &pb.FilesAdopted{RequestId: m.RequestId}
	if adopter == nil {
		out.Error = convert.Errors.ToProto(fmt.Errorf("adopt remote files: the host's streams do not: %w", sdk.ErrUnsupported))
		return out
	}
	files := convert.StreamHandlesFromProto(m.Files)
	hs, err := adopter.AdoptRemoteFiles(ctx, files)
	if err == nil {
		hs, err = adopted(files, hs)
	}
	if err != nil {
		out.Error = convert.Errors.ToProto(err)
		return out
	}
	out.Handles = convert.StreamHandlesToProto(hs)
	return out
}

// localFiles are the local state files a snapshot write opened (sdk.LocalStateFactory):
// the plugin writes them itself and the host publishes or discards them when the plugin
// closes their streams.
type localFiles struct {
	factory sdk.LocalStateFactory // nil: the host's factory creates none
	f       map[uint64]localFile
}

type localFile struct {
	path  string
	scope sdk.Scope
}

// create asks the factory for a local file for stream sid; "" when there is none.
func (l *localFiles) create(ctx context.Context, sid uint64, scope sdk.Scope) (string, error) {
	if l.factory == nil {
		return "", nil
	}
	path, err := l.factory.CreateLocalStateFile(ctx, scope)
	if err != nil || path == "" {
		return "", err
	}
	l.f[sid] = localFile{path: path, scope: scope}
	return path, nil
}

// take removes stream sid's file from the open ones and returns it.
func (l *localFiles) take(sid uint64) (localFile, bool) {
	f, ok := l.f[sid]
	delete(l.f, sid)
	return f, ok
}

// discardAll deletes the files still open: the snapshot write ended without their close.
func (l *localFiles) discardAll(ctx context.Context) {
	for sid, f := range l.f {
		_ = l.factory.DiscardLocalStateFile(context.WithoutCancel(ctx), f.path)
		delete(l.f, sid)
	}
}
