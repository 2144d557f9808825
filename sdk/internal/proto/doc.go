// Package pb is Flowstate's plugin protocol as protoc generates it from the .proto files
// beside it (scripts/genproto.sh, `make proto`): the messages and the gRPC services of a
// state backend, a checkpoint storage and a plugin's info. Both ends use it (sdk/server,
// sdk/internal/client, with sdk/internal/convert and sdk/internal/wire); the contract
// (package sdk) never does.
//
// The generated code imports only protobuf and gRPC; this package must never import
// anything of the SDK.
package pb
