package jetstream

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connect opens a connection for what (a sentence fragment naming its user, for errors)
// and returns it with its JetStream context; the caller closes the connection. A failure
// names the servers and the user, never a secret. The group of a distributed job's
// runners (runtime/cluster) meets on it.
func (c Conn) Connect(ctx context.Context, what string) (*nats.Conn, jetstream.JetStream, error) {
	return c.connect(ctx, what)
}
