package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/cluster"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// groupEndpoint is the control endpoint of a runner in distributed mode: the same guard,
// token and limits as a runner's of a job it runs alone, but what it is asked goes to the
// whole job's group. A savepoint or stop becomes a request of the job (cluster.Submit),
// which every runner serves, and its answer waits for the manifest; GET /v1/cluster and
// the page at / show every runner and every task of the job (cluster.View).
type groupEndpoint struct {
	srv    *control.Server
	js     jetstream.JetStream
	bucket string
	job    string
	log    hclog.Logger
}

// listenGroup serves the control endpoint of a member of job's group on js.
func listenGroup(ctx context.Context, cfg *config.Config, js jetstream.JetStream, job string, log hclog.Logger) (*groupEndpoint, error) {
	if err := cfg.Control.CheckExposure(); err != nil {
		return nil, err
	}
	e := &groupEndpoint{js: js, bucket: cfg.Cluster.Bucket, job: job, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/cluster", e.serveView)
	mux.HandleFunc("GET /{$}", e.servePage)
	c := cfg.Control
	srv, err := control.Listen(control.Options{
		Address: c.Address, Job: job, Cancel: func() { go e.submit(ctx, cluster.Request{Kind: cluster.RequestStop}, nil) }, More: mux,
		TokenFile: c.TokenFile, OpenReads: c.ReadsOpen(), CertFile: c.CertFile, KeyFile: c.KeyFile, AllowedHosts: c.AllowedHosts,
		CheckTarget: savepointTargetCheck(cfg, job),
	})
	if err != nil {
		return nil, err
	}
	e.srv = srv
	go e.forward(ctx)
	return e, nil
}

// forward turns the endpoint's savepoint requests into requests of the job, until ctx ends.
func (e *groupEndpoint) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case sp := <-e.srv.Savepoints():
			req := cluster.Request{Kind: cluster.RequestSavepoint, Target: sp.Target}
			if sp.Stop {
				req = cluster.Request{Kind: cluster.RequestStop, Target: sp.Target, Savepoint: !sp.Drain, Drain: sp.Drain}
			}
			go e.submit(ctx, req, sp.Reply)
		}
	}
}

// submit asks the job's group for req and sends its outcome to reply (nil: none).
func (e *groupEndpoint) submit(ctx context.Context, req cluster.Request, reply chan<- dataflow.SavepointResult) {
	o, err := func() (cluster.Outcome, error) {
		id, err := cluster.Submit(ctx, e.js, e.bucket, e.job, req)
		if err != nil {
			return cluster.Outcome{}, err
		}
		e.log.Info("asked every runner of the job", "request", id, "kind", req.Kind)
		return cluster.Await(ctx, e.js, e.bucket, e.job, id)
	}()
	if err == nil && o.Err != "" {
		err = errors.New(o.Err)
	}
	if err != nil {
		e.log.Warn("a request of the job failed", "kind", req.Kind, "error", err)
	}
	if reply != nil {
		res := dataflow.SavepointResult{Err: err}
		res.Location.ExternalPointer = o.Manifest
		reply <- res
	}
}

func (e *groupEndpoint) view(r *http.Request) (cluster.View, error) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	return cluster.ReadView(ctx, e.js, e.bucket, e.job)
}

func (e *groupEndpoint) serveView(w http.ResponseWriter, r *http.Request) {
	v, err := e.view(r)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(v)
}

func (e *groupEndpoint) servePage(w http.ResponseWriter, r *http.Request) {
	v, err := e.view(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	page.Execute(w, struct {
		View cluster.View
		Err  error
		Now  time.Time
	}{v, err, time.Now()})
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return now.Sub(t).Round(100*time.Millisecond).String() + " ago"
	},
	"lag": func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	},
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>Flowstate: job {{.View.Job}} (distributed)</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#eee}</style></head>
<body><h1>Job {{.View.Job}} <small>distributed</small></h1>
{{if .Err}}<p>The job's group cannot be read: {{.Err}}</p>{{end}}
<h2>Runners ({{len .View.Members}})</h2>
<table id="runners"><tr><th>Runner</th><th>Host</th><th>Pid</th><th>Control endpoint</th><th>Tasks</th><th>Updated</th></tr>
{{range .View.Members}}<tr><td>{{.ID}}</td><td>{{.Holder.Host}}</td><td>{{.Holder.PID}}</td><td>{{.Holder.Control}}</td>
<td>{{range .Status.Tasks}}{{.Task}} {{end}}</td><td>{{ago $.Now .Status.Updated}}</td></tr>{{end}}</table>
<h2>Tasks ({{len .View.Tasks}})</h2>
<table id="tasks"><tr><th>Task</th><th>Runner</th><th>State</th><th>Epoch</th><th>Records read</th><th>Lag</th><th>Last checkpoint</th></tr>
{{range .View.Tasks}}<tr><td>{{.Task}}</td><td>{{or .Member "-"}}</td>
{{with .Status}}<td>{{.State}}</td><td>{{.Epoch}}</td><td>{{.RecordsIn}}</td><td>{{lag .Lag}}</td>
<td>{{with .LastCheckpoint}}{{.ID}}, {{ago $.Now .Time}}, {{.Pointer}}{{else}}-{{end}}</td>
{{else}}<td>{{if .Member}}STARTING{{else}}UNCLAIMED{{end}}</td><td>{{.Epoch}}</td><td>-</td><td>-</td><td>-</td>{{end}}</tr>{{end}}
</table></body></html>`))
