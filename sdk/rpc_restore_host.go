package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// restoreOnPlugin runs Restore of keyed backend id in the plugin, answering its reads from
// state: each request gets the next chunk of at most 1 MiB.
func restoreOnPlugin(ctx context.Context, c pb.StateBackendClient, id uint64, handles []KeyedStateHandle, state StateReader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.Restore(ctx)
	if err != nil {
		return fromStatus(err)
	}
	// Send errors show up as the error of the next Recv.
	_ = st.Send(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Start{Start: &pb.RestoreStart{BackendId: id, Handles: keyedHandlesToProto(handles)}}})
	readers := map[uint64]io.ReadCloser{}
	defer func() {
		for _, rc := range readers {
			_ = rc.Close()
		}
	}()
	reply := func(m *pb.RestoreHostMessage) { _ = st.Send(m) }
	var buf []byte
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("restore: the plugin ended it without a result")
		}
		if err != nil {
			return fromStatus(err)
		}
		switch x := m.Msg.(type) {
		case *pb.RestorePluginMessage_Open:
			rid := x.Open.ReadId
			var rc io.ReadCloser
			if state == nil {
				err = fmt.Errorf("restore: no state reader given: %w", ErrInvalidArgument)
			} else {
				rc, err = state.Open(ctx, streamHandleFromProto(x.Open.Handle))
			}
			if err == nil {
				readers[rid] = rc
			}
			reply(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Opened{Opened: &pb.ReadOpened{ReadId: rid, Error: errorToProto(err)}}})
		case *pb.RestorePluginMessage_Next:
			rid := x.Next.ReadId
			d := &pb.ReadData{ReadId: rid}
			if rc := readers[rid]; rc == nil {
				d.Error = errorToProto(fmt.Errorf("state read %d is not open: %w", rid, ErrInvalidArgument))
			} else {
				if buf == nil {
					buf = make([]byte, wire.ChunkSize)
				}
				n, err := io.ReadFull(rc, buf)
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					d.Eof, err = true, nil
				}
				d.Data, d.Error = buf[:n], errorToProto(err)
			}
			reply(&pb.RestoreHostMessage{Msg: &pb.RestoreHostMessage_Data{Data: d}})
		case *pb.RestorePluginMessage_Close:
			if rc := readers[x.Close.ReadId]; rc != nil {
				_ = rc.Close()
				delete(readers, x.Close.ReadId)
			}
		case *pb.RestorePluginMessage_Done:
			_ = st.CloseSend()
			for {
				if _, err := st.Recv(); err != nil {
					break
				}
			}
			return errorFromProto(x.Done.Error)
		}
	}
}
