package replica

import (
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/server"
)

// Routes is the server's table for an engine: each policy group's review
// path, answered by the engine's handler for that group, in group order,
// each followed by the paths of its admission policy bindings'
// webhook entries.
func Routes(eng *engine.Engine) server.Routes {
	groups := eng.Set().Groups
	table := make(server.Routes, 0, len(groups))
	for _, g := range groups {
		table = append(table, server.Route{Path: g.Path(), Handler: eng.Handler(g)})
		for _, w := range g.BindingWebhooks {
			table = append(table, server.Route{Path: w.Group.Path(), Handler: eng.Handler(w.Group)})
		}
	}
	return table
}
