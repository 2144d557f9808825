package monitor

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed web
var webFiles embed.FS

// Handler serves the Monitor over HTTP:
//
//	GET /metrics                                            Prometheus text format
//	GET /jobs, /jobs/overview                               the job (Flink's job list shapes)
//	GET /jobs/<job>                                         JobDetails
//	GET /jobs/<job>/checkpoints                             CheckpointingStatistics
//	GET /jobs/<job>/checkpoints/config                      CheckpointConfigInfo
//	GET /jobs/<job>/checkpoints/details/<id>                CheckpointStatistics
//	GET /jobs/<job>/checkpoints/details/<id>/subtasks/<task> TaskCheckpointDetails
//	GET /                                                   the web page (and /web/...)
//
// The control endpoint mounts it beside its own routes; its paths are relative, so it may
// also be mounted under a prefix with http.StripPrefix.
func Handler(m *Monitor) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /jobs", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		state := m.state
		m.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"jobs": []map[string]string{{"id": m.job, "status": state}}})
	})
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.overview())
	})
	job := func(h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if name := r.PathValue("job"); name != m.job {
				writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found: this runner runs job %q", name, m.job))
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /jobs/{job}", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.Details())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.Checkpoints())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/config", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.CheckpointConfig())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/details/{id}", job(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkpointID(w, r)
		if !ok {
			return
		}
		v, ok := m.Checkpoint(id)
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("checkpoint %d is not in the job's checkpoint history", id))
			return
		}
		writeJSON(w, http.StatusOK, v)
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/details/{id}/subtasks/{task}", job(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkpointID(w, r)
		if !ok {
			return
		}
		v, ok := m.TaskCheckpoint(id, r.PathValue("task"))
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("checkpoint %d of task %q is not in the job's checkpoint history", id, r.PathValue("task")))
			return
		}
		writeJSON(w, http.StatusOK, v)
	}))
	web, _ := fs.Sub(webFiles, "web")
	static := http.FileServerFS(web)
	mux.Handle("GET /web/", http.StripPrefix("/web", static))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, web, "index.html")
	})
	return mux
}

func checkpointID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpoint id %q: not a number", r.PathValue("id")))
		return 0, false
	}
	return id, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorResponse{Errors: []string{msg}})
}
