package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// writeSnapshotOnPlugin runs sdk.Snapshot.Write of snapshot id in the plugin, serving the
// streams it opens from the host's factory.
func writeSnapshotOnPlugin(ctx context.Context, c pb.StateBackendClient, id uint64, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.SnapshotWrite(ctx)
	if err != nil {
		return nil, wireErrors.FromStatus(err)
	}
	// Send errors show up as the error of the next Recv.
	_ = st.Send(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Start{Start: &pb.SnapshotWriteStart{SnapshotId: id}}})
	open := map[uint64]sdk.CheckpointStateOutputStream{}
	failed := map[uint64]error{}
	defer func() {
		for _, out := range open {
			_ = out.Close()
		}
	}()
	reply := func(m *pb.SnapshotWriteHostMessage) { _ = st.Send(m) }
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("snapshot write: the plugin ended it without a result")
		}
		if err != nil {
			return nil, wireErrors.FromStatus(err)
		}
		switch x := m.Msg.(type) {
		case *pb.SnapshotWritePluginMessage_Open:
			sid := x.Open.StreamId
			var out sdk.CheckpointStateOutputStream
			if streams == nil {
				err = fmt.Errorf("snapshot write: no stream factory given: %w", sdk.ErrInvalidArgument)
			} else {
				out, err = streams.CreateCheckpointStateOutputStream(ctx, scopeFromProto(x.Open.Scope))
			}
			if err == nil {
				open[sid] = out
			}
			reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Opened{Opened: &pb.StreamOpened{StreamId: sid, Error: wireErrors.ToProto(err)}}})
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
				reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Failed{Failed: &pb.StreamFailed{StreamId: sid, Error: wireErrors.ToProto(err)}}})
			}
		case *pb.SnapshotWritePluginMessage_Close:
			sid := x.Close.StreamId
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
					closed.Error = wireErrors.ToProto(err)
				} else {
					closed.Handle = streamHandleToProto(h)
				}
			case ferr != nil:
				closed.Error = wireErrors.ToProto(ferr)
			default:
				closed.Error = wireErrors.ToProto(fmt.Errorf("state stream %d is not open: %w", sid, sdk.ErrInvalidArgument))
			}
			reply(&pb.SnapshotWriteHostMessage{Msg: &pb.SnapshotWriteHostMessage_Closed{Closed: closed}})
		case *pb.SnapshotWritePluginMessage_Done:
			_ = st.CloseSend()
			for {
				if _, err := st.Recv(); err != nil {
					break
				}
			}
			if err := wireErrors.FromProto(x.Done.Error); err != nil {
				return nil, err
			}
			return keyedHandlesFromProto(x.Done.Handles), nil
		}
	}
}
