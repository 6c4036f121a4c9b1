package fakeapi

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
)

// continuePreparation answers a request that carries the results of the
// pending preparation step with the next step (the scripted reply last).
func (s *Server) continuePreparation(req *Request) (Reply, chan struct{}, bool) {
	s.mu.Lock()
	p := s.pending
	if p == nil || !answersAll(req, p.after) {
		s.mu.Unlock()
		return Reply{}, nil, false
	}
	reply := p.replies[0]
	p.replies = p.replies[1:]
	p.after = toolIDs(reply)
	abandoned := req.abandoned
	if len(p.replies) == 0 {
		s.pending = nil
		abandoned = p.call.abandoned
	}
	req.Reply = reply
	s.prepared = append(s.prepared, req)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return reply, abandoned, true
}

// isPreparing reports whether req's reply is the first preparation step.
func (s *Server) isPreparing(req *Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending != nil && s.pending.call == req
}

func toolIDs(r Reply) []string {
	var ids []string
	for _, t := range r.Tools {
		ids = append(ids, t.ID)
	}
	return ids
}

// answersAll reports whether the request carries a tool_result for each ID.
func answersAll(req *Request, ids []string) bool {
	for _, id := range ids {
		if _, ok := req.ToolResult(id); !ok {
			return false
		}
	}
	return len(ids) > 0
}

// prepare returns the model calls the current CLI's model makes before
// reply, and reply as sent after them.
func prepare(req *Request, reply Reply) ([]Reply, Reply) {
	if reply.Status != 0 && reply.Status != http.StatusOK || len(reply.Tools) == 0 {
		return nil, reply
	}
	var steps []Reply
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t] = true
	}
	deferred := map[string]bool{}
	for _, n := range req.DeferredTools() {
		deferred[n] = true
	}
	var load []string
	for _, t := range reply.Tools {
		if !offered[t.Name] && deferred[t.Name] && !slices.Contains(load, t.Name) {
			load = append(load, t.Name)
		}
	}
	if len(load) > 0 {
		steps = append(steps, Tool("ToolSearch", map[string]any{"query": "select:" + strings.Join(load, ","), "max_results": len(load)}))
	}
	tools := slices.Clone(reply.Tools)
	for i, t := range tools {
		if t.Name != "ExitPlanMode" {
			continue
		}
		path := req.PlanFile()
		var in map[string]any
		if path == "" || json.Unmarshal(inputJSON(t.Input), &in) != nil {
			continue
		}
		plan, _ := in["plan"].(string)
		if plan == "" {
			continue
		}
		if _, err := os.Stat(path); err == nil { // the CLI writes a file only after it was read
			steps = append(steps, Tool("Read", map[string]string{"file_path": path}))
		}
		steps = append(steps, Tool("Write", map[string]string{"file_path": path, "content": plan}))
		delete(in, "plan")
		tools[i].Input = in
	}
	reply.Tools = tools
	return steps, reply
}
