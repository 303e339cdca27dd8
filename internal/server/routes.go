package server

import "github.com/tollgate-dev/tollgate/internal/admission"

// Route is one review path and the handler that decides its reviews.
type Route struct {
	Path    string
	Handler admission.Handler
}

// Routes is the table of review paths the server answers, in the order it
// lists them. A table is not changed once given to the server: a reload
// builds a new one and swaps it in whole with SetRoutes.
type Routes []Route
