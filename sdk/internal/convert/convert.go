// Package convert is the one set of converters between the sdk's public types and the
// protocol's messages, used by both ends of the wire: the plugin end (sdk/server) and the
// host end (sdk/internal/client). It also holds the error codec both ends send errors
// with, and the kinds a plugin is served as.
//
// It imports the contract (sdk), the protocol (sdk/internal/proto) and sdk/internal/wire;
// it must never import either end (sdk/server, sdk/internal/client, sdk/host).
package convert

import (
	"errors"
	"time"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Errors converts the errors both ends send and receive: the sdk's sentinels and
// *sdk.OptionError keep their identity across the wire.
var Errors = wire.NewErrors(wire.Sentinels{
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

// KindsOf returns the kinds p implements, state backend first: what the server serves of
// it.
func KindsOf(p sdk.Plugin) []sdk.Kind {
	var kinds []sdk.Kind
	if _, ok := p.(sdk.StateBackend); ok {
		kinds = append(kinds, sdk.KindStateBackend)
	}
	if _, ok := p.(sdk.CheckpointStorage); ok {
		kinds = append(kinds, sdk.KindCheckpointStorage)
	}
	return kinds
}

// ScopeToProto converts a scope.
func ScopeToProto(s sdk.Scope) pb.Scope {
	if s == sdk.ScopeShared {
		return pb.Scope_SCOPE_SHARED
	}
	return pb.Scope_SCOPE_EXCLUSIVE
}

// ScopeFromProto converts a scope; anything but shared is exclusive.
func ScopeFromProto(s pb.Scope) sdk.Scope {
	if s == pb.Scope_SCOPE_SHARED {
		return sdk.ScopeShared
	}
	return sdk.ScopeExclusive
}

// StreamHandleToProto converts a stream handle.
func StreamHandleToProto(h sdk.StreamStateHandle) *pb.StreamStateHandle {
	return &pb.StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: ScopeToProto(h.Scope), Checksum: h.Checksum}
}

// StreamHandleFromProto converts a stream handle; nil is the zero handle.
func StreamHandleFromProto(h *pb.StreamStateHandle) sdk.StreamStateHandle {
	if h == nil {
		return sdk.StreamStateHandle{}
	}
	return sdk.StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: ScopeFromProto(h.Scope), Checksum: h.Checksum}
}

// StreamHandlesToProto converts stream handles.
func StreamHandlesToProto(hs []sdk.StreamStateHandle) []*pb.StreamStateHandle {
	return each(hs, StreamHandleToProto)
}

// StreamHandlesFromProto converts stream handles.
func StreamHandlesFromProto(hs []*pb.StreamStateHandle) []sdk.StreamStateHandle {
	return each(hs, StreamHandleFromProto)
}

// each converts every element of xs with f.
func each[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// KeyGroupsToProto converts a key-group range.
func KeyGroupsToProto(r sdk.KeyGroupRange) *pb.KeyGroupRange {
	return &pb.KeyGroupRange{Start: int32(r.Start), End: int32(r.End)}
}

// KeyGroupsFromProto converts a key-group range; nil is the empty range.
func KeyGroupsFromProto(r *pb.KeyGroupRange) sdk.KeyGroupRange {
	if r == nil {
		return sdk.KeyGroupRange{}
	}
	return sdk.KeyGroupRange{Start: int(r.Start), End: int(r.End)}
}

// KeyedHandlesToProto converts keyed state handles.
func KeyedHandlesToProto(hs []sdk.KeyedStateHandle) []*pb.KeyedStateHandle {
	out := make([]*pb.KeyedStateHandle, len(hs))
	for i, h := range hs {
		files := make([]*pb.NamedStateHandle, len(h.Files))
		for j, f := range h.Files {
			files[j] = &pb.NamedStateHandle{Name: f.Name, Handle: StreamHandleToProto(f.Handle)}
		}
		out[i] = &pb.KeyedStateHandle{KeyGroups: KeyGroupsToProto(h.KeyGroups), Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

// KeyedHandlesFromProto converts keyed state handles; a handle without files has nil
// Files.
func KeyedHandlesFromProto(hs []*pb.KeyedStateHandle) []sdk.KeyedStateHandle {
	out := make([]sdk.KeyedStateHandle, len(hs))
	for i, h := range hs {
		var files []sdk.NamedStateHandle
		if len(h.Files) > 0 {
			files = make([]sdk.NamedStateHandle, len(h.Files))
		}
		for j, f := range h.Files {
			files[j] = sdk.NamedStateHandle{Name: f.Name, Handle: StreamHandleFromProto(f.Handle)}
		}
		out[i] = sdk.KeyedStateHandle{KeyGroups: KeyGroupsFromProto(h.KeyGroups), Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

// CompletedToProto converts a completed location; a zero Time travels as 0.
func CompletedToProto(c sdk.CompletedCheckpointStorageLocation) *pb.CompletedLocation {
	var t int64
	if !c.Time.IsZero() {
		t = c.Time.UnixNano()
	}
	return &pb.CompletedLocation{ExternalPointer: c.ExternalPointer, Metadata: StreamHandleToProto(c.Metadata), CheckpointId: c.CheckpointID, TimeUnixNano: t}
}

// CompletedFromProto converts a completed location; nil is the zero location, and 0 the
// zero Time.
func CompletedFromProto(c *pb.CompletedLocation) sdk.CompletedCheckpointStorageLocation {
	if c == nil {
		return sdk.CompletedCheckpointStorageLocation{}
	}
	var t time.Time
	if c.TimeUnixNano != 0 {
		t = time.Unix(0, c.TimeUnixNano)
	}
	return sdk.CompletedCheckpointStorageLocation{ExternalPointer: c.ExternalPointer, Metadata: StreamHandleFromProto(c.Metadata), CheckpointID: c.CheckpointId, Time: t}
}

// CompletedLocationsToProto converts completed locations.
func CompletedLocationsToProto(cs []sdk.CompletedCheckpointStorageLocation) []*pb.CompletedLocation {
	return each(cs, CompletedToProto)
}

// CompletedLocationsFromProto converts completed locations.
func CompletedLocationsFromProto(cs []*pb.CompletedLocation) []sdk.CompletedCheckpointStorageLocation {
	return each(cs, CompletedFromProto)
}

// ParamsToProto converts the parameters of a keyed backend into its creation request.
func ParamsToProto(p sdk.KeyedBackendParams) *pb.CreateKeyedBackendRequest {
	return &pb.CreateKeyedBackendRequest{
		JobId:          p.JobID,
		OperatorId:     p.OperatorID,
		Subtask:        int32(p.Subtask),
		Parallelism:    int32(p.Parallelism),
		MaxParallelism: int32(p.MaxParallelism),
		KeyGroups:      KeyGroupsToProto(p.KeyGroups),
	}
}

// ParamsFromProto converts a keyed backend's creation request into its parameters.
func ParamsFromProto(p *pb.CreateKeyedBackendRequest) sdk.KeyedBackendParams {
	return sdk.KeyedBackendParams{
		JobID:          p.JobId,
		OperatorID:     p.OperatorId,
		Subtask:        int(p.Subtask),
		Parallelism:    int(p.Parallelism),
		MaxParallelism: int(p.MaxParallelism),
		KeyGroups:      KeyGroupsFromProto(p.KeyGroups),
	}
}

// LeaseToProto converts a lease record.
func LeaseToProto(r sdk.LeaseRecord) *pb.LeaseRecord {
	return &pb.LeaseRecord{Data: r.Data, Version: r.Version}
}

// LeaseFromProto converts a lease record.
func LeaseFromProto(r *pb.LeaseRecord) sdk.LeaseRecord {
	return sdk.LeaseRecord{Data: r.GetData(), Version: r.GetVersion()}
}

// PackMutations encodes ms for WriteRequest.packed.
func PackMutations(ms []sdk.Mutation) []byte {
	return wire.PackMutations(len(ms), func(i int) wire.Mutation { return wire.Mutation(ms[i]) })
}

// UnpackMutations decodes WriteRequest.packed, appending the mutations to ms.
func UnpackMutations(packed []byte, ms []sdk.Mutation) ([]sdk.Mutation, error) {
	err := wire.UnpackMutations(packed, func(m wire.Mutation) { ms = append(ms, sdk.Mutation(m)) })
	return ms, err
}
