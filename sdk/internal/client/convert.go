package client

import (
	"errors"
	"time"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Converters of the host end between the sdk's types and the protocol's messages. The
// plugin end (package sdk) has its own for the types that cross both ways (handles,
// key-group ranges, scopes, completed locations): they are unexported there, and package
// sdk cannot import this one (see docs/architecture.md, "The SDK's two ends").

// wireErrors converts the errors the host end sends and receives.
var wireErrors = wire.NewErrors(wire.Sentinels{
	NotFound: sdk.ErrNotFound, InvalidArgument: sdk.ErrInvalidArgument, StateTooLarge: sdk.ErrStateTooLarge,
	Unsupported: sdk.ErrUnsupported, Corrupt: sdk.ErrCorrupt, Conflict: sdk.ErrConflict,
}, wire.OptionCodec{
	Find: func(err error) (wire.OptionFields, bool) {
		var oe *sdk.OptionError
		if !errors.As(err, &oe) {
			return wire.OptionFields{}, false
		}
		return wire.OptionFields{Option: oe.Option, Value: oe.Value, Err: oe.Err}, true
	},
	New: func(f wire.OptionFields) error { return &sdk.OptionError{Option: f.Option, Value: f.Value, Err: f.Err} },
})

func scopeToProto(s sdk.Scope) pb.Scope {
	if s == sdk.ScopeShared {
		return pb.Scope_SCOPE_SHARED
	}
	return pb.Scope_SCOPE_EXCLUSIVE
}

func scopeFromProto(s pb.Scope) sdk.Scope {
	if s == pb.Scope_SCOPE_SHARED {
		return sdk.ScopeShared
	}
	return sdk.ScopeExclusive
}

func streamHandleToProto(h sdk.StreamStateHandle) *pb.StreamStateHandle {
	return &pb.StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: scopeToProto(h.Scope), Checksum: h.Checksum}
}

func streamHandleFromProto(h *pb.StreamStateHandle) sdk.StreamStateHandle {
	if h == nil {
		return sdk.StreamStateHandle{}
	}
	return sdk.StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: scopeFromProto(h.Scope), Checksum: h.Checksum}
}

func keyGroupsToProto(r sdk.KeyGroupRange) *pb.KeyGroupRange {
	return &pb.KeyGroupRange{Start: int32(r.Start), End: int32(r.End)}
}

func keyedHandlesToProto(hs []sdk.KeyedStateHandle) []*pb.KeyedStateHandle {
	out := make([]*pb.KeyedStateHandle, len(hs))
	for i, h := range hs {
		files := make([]*pb.NamedStateHandle, len(h.Files))
		for j, f := range h.Files {
			files[j] = &pb.NamedStateHandle{Name: f.Name, Handle: streamHandleToProto(f.Handle)}
		}
		out[i] = &pb.KeyedStateHandle{KeyGroups: keyGroupsToProto(h.KeyGroups), Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

func keyedHandlesFromProto(hs []*pb.KeyedStateHandle) []sdk.KeyedStateHandle {
	out := make([]sdk.KeyedStateHandle, len(hs))
	for i, h := range hs {
		var files []sdk.NamedStateHandle
		if len(h.Files) > 0 {
			files = make([]sdk.NamedStateHandle, len(h.Files))
		}
		for j, f := range h.Files {
			files[j] = sdk.NamedStateHandle{Name: f.Name, Handle: streamHandleFromProto(f.Handle)}
		}
		var kg sdk.KeyGroupRange
		if h.KeyGroups != nil {
			kg = sdk.KeyGroupRange{Start: int(h.KeyGroups.Start), End: int(h.KeyGroups.End)}
		}
		out[i] = sdk.KeyedStateHandle{KeyGroups: kg, Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

func completedToProto(c sdk.CompletedCheckpointStorageLocation) *pb.CompletedLocation {
	var t int64
	if !c.Time.IsZero() {
		t = c.Time.UnixNano()
	}
	return &pb.CompletedLocation{ExternalPointer: c.ExternalPointer, Metadata: streamHandleToProto(c.Metadata), CheckpointId: c.CheckpointID, TimeUnixNano: t}
}

func completedFromProto(c *pb.CompletedLocation) sdk.CompletedCheckpointStorageLocation {
	if c == nil {
		return sdk.CompletedCheckpointStorageLocation{}
	}
	var t time.Time
	if c.TimeUnixNano != 0 {
		t = time.Unix(0, c.TimeUnixNano)
	}
	return sdk.CompletedCheckpointStorageLocation{ExternalPointer: c.ExternalPointer, Metadata: streamHandleFromProto(c.Metadata), CheckpointID: c.CheckpointId, Time: t}
}

func paramsToProto(p sdk.KeyedBackendParams) *pb.CreateKeyedBackendRequest {
	return &pb.CreateKeyedBackendRequest{
		JobId:          p.JobID,
		OperatorId:     p.OperatorID,
		Subtask:        int32(p.Subtask),
		Parallelism:    int32(p.Parallelism),
		MaxParallelism: int32(p.MaxParallelism),
		KeyGroups:      keyGroupsToProto(p.KeyGroups),
	}
}

// packMutations encodes ms for WriteRequest.packed.
func packMutations(ms []sdk.Mutation) []byte {
	return wire.PackMutations(len(ms), func(i int) wire.Mutation { return wire.Mutation(ms[i]) })
}
