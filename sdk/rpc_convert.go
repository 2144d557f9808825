package sdk

import (
	"encoding/binary"
	"fmt"
	"time"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// Converters between the sdk's types and the protocol's messages. Nothing outside the
// protocol's glue sees a protobuf type.

func scopeToProto(s Scope) pb.Scope {
	if s == ScopeShared {
		return pb.Scope_SCOPE_SHARED
	}
	return pb.Scope_SCOPE_EXCLUSIVE
}

func scopeFromProto(s pb.Scope) Scope {
	if s == pb.Scope_SCOPE_SHARED {
		return ScopeShared
	}
	return ScopeExclusive
}

func streamHandleToProto(h StreamStateHandle) *pb.StreamStateHandle {
	return &pb.StreamStateHandle{
		Ref:      h.Ref,
		Inline:   h.Inline,
		Size:     h.Size,
		Scope:    scopeToProto(h.Scope),
		Checksum: h.Checksum,
	}
}

func streamHandleFromProto(h *pb.StreamStateHandle) StreamStateHandle {
	if h == nil {
		return StreamStateHandle{}
	}
	return StreamStateHandle{
		Ref:      h.Ref,
		Inline:   h.Inline,
		Size:     h.Size,
		Scope:    scopeFromProto(h.Scope),
		Checksum: h.Checksum,
	}
}

func streamHandlesToProto(hs []StreamStateHandle) []*pb.StreamStateHandle {
	out := make([]*pb.StreamStateHandle, len(hs))
	for i, h := range hs {
		out[i] = streamHandleToProto(h)
	}
	return out
}

func streamHandlesFromProto(hs []*pb.StreamStateHandle) []StreamStateHandle {
	out := make([]StreamStateHandle, len(hs))
	for i, h := range hs {
		out[i] = streamHandleFromProto(h)
	}
	return out
}

func completedToProto(c CompletedCheckpointStorageLocation) *pb.CompletedLocation {
	var t int64
	if !c.Time.IsZero() {
		t = c.Time.UnixNano()
	}
	return &pb.CompletedLocation{
		ExternalPointer: c.ExternalPointer,
		Metadata:        streamHandleToProto(c.Metadata),
		CheckpointId:    c.CheckpointID,
		TimeUnixNano:    t,
	}
}

func completedFromProto(c *pb.CompletedLocation) CompletedCheckpointStorageLocation {
	if c == nil {
		return CompletedCheckpointStorageLocation{}
	}
	var t time.Time
	if c.TimeUnixNano != 0 {
		t = time.Unix(0, c.TimeUnixNano)
	}
	return CompletedCheckpointStorageLocation{
		ExternalPointer: c.ExternalPointer,
		Metadata:        streamHandleFromProto(c.Metadata),
		CheckpointID:    c.CheckpointId,
		Time:            t,
	}
}

func keyGroupsToProto(r KeyGroupRange) *pb.KeyGroupRange {
	return &pb.KeyGroupRange{Start: int32(r.Start), End: int32(r.End)}
}

func keyGroupsFromProto(r *pb.KeyGroupRange) KeyGroupRange {
	if r == nil {
		return KeyGroupRange{}
	}
	return KeyGroupRange{Start: int(r.Start), End: int(r.End)}
}

func keyedHandlesToProto(hs []KeyedStateHandle) []*pb.KeyedStateHandle {
	out := make([]*pb.KeyedStateHandle, len(hs))
	for i, h := range hs {
		files := make([]*pb.NamedStateHandle, len(h.Files))
		for j, f := range h.Files {
			files[j] = &pb.NamedStateHandle{Name: f.Name, Handle: streamHandleToProto(f.Handle)}
		}
		out[i] = &pb.KeyedStateHandle{
			KeyGroups: keyGroupsToProto(h.KeyGroups),
			Format:    h.Format,
			Files:     files,
			Meta:      h.Meta,
		}
	}
	return out
}

func keyedHandlesFromProto(hs []*pb.KeyedStateHandle) []KeyedStateHandle {
	out := make([]KeyedStateHandle, len(hs))
	for i, h := range hs {
		var files []NamedStateHandle
		if len(h.Files) > 0 {
			files = make([]NamedStateHandle, len(h.Files))
		}
		for j, f := range h.Files {
			files[j] = NamedStateHandle{Name: f.Name, Handle: streamHandleFromProto(f.Handle)}
		}
		out[i] = KeyedStateHandle{
			KeyGroups: keyGroupsFromProto(h.KeyGroups),
			Format:    h.Format,
			Files:     files,
			Meta:      h.Meta,
		}
	}
	return out
}

func paramsToProto(p KeyedBackendParams) *pb.CreateKeyedBackendRequest {
	return &pb.CreateKeyedBackendRequest{
		JobId:          p.JobID,
		OperatorId:     p.OperatorID,
		Subtask:        int32(p.Subtask),
		Parallelism:    int32(p.Parallelism),
		MaxParallelism: int32(p.MaxParallelism),
		KeyGroups:      keyGroupsToProto(p.KeyGroups),
	}
}

func paramsFromProto(p *pb.CreateKeyedBackendRequest) KeyedBackendParams {
	return KeyedBackendParams{
		JobID:          p.JobId,
		OperatorID:     p.OperatorId,
		Subtask:        int(p.Subtask),
		Parallelism:    int(p.Parallelism),
		MaxParallelism: int(p.MaxParallelism),
		KeyGroups:      keyGroupsFromProto(p.KeyGroups),
	}
}

// packMutations encodes mutations for WriteRequest.packed: uvarint(len(key)) key, then 0
// for a delete or uvarint(len(value)+1) value.
func packMutations(ms []Mutation) []byte {
	n := 0
	for _, m := range ms {
		n += len(m.Key) + len(m.Value) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, n)
	for _, m := range ms {
		b = binary.AppendUvarint(b, uint64(len(m.Key)))
		b = append(b, m.Key...)
		if m.Delete {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(m.Value))+1)
		b = append(b, m.Value...)
	}
	return b
}

// unpackMutations appends the mutations packMutations encoded to dst; their keys and
// values point into b.
func unpackMutations(dst []Mutation, b []byte) ([]Mutation, error) {
	bad := func(what string) ([]Mutation, error) {
		return nil, fmt.Errorf("write request: malformed packed mutations (%s): %w", what, ErrInvalidArgument)
	}
	for len(b) > 0 {
		kl, n := binary.Uvarint(b)
		if n <= 0 || kl > uint64(len(b)-n) {
			return bad("key length")
		}
		key := b[n : n+int(kl) : n+int(kl)]
		b = b[n+int(kl):]
		vl, n := binary.Uvarint(b)
		if n <= 0 || (vl > 0 && vl-1 > uint64(len(b)-n)) {
			return bad("value length")
		}
		if vl == 0 {
			dst = append(dst, Mutation{Key: key, Delete: true})
			b = b[n:]
			continue
		}
		end := n + int(vl-1)
		dst = append(dst, Mutation{Key: key, Value: b[n:end:end]})
		b = b[end:]
	}
	return dst, nil
}

func mutationsFromProto(ms []*pb.Mutation) []Mutation {
	out := make([]Mutation, len(ms))
	for i, m := range ms {
		out[i] = Mutation{Key: m.Key, Value: m.Value, Delete: m.Delete}
	}
	return out
}

func kindsToProto(ks []Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func kindsFromProto(ks []string) []Kind {
	out := make([]Kind, len(ks))
	for i, k := range ks {
		out[i] = Kind(k)
	}
	return out
}
