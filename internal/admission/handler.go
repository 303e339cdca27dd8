package admission

import "context"

// Handler decides one admission request.
type Handler interface {
	Handle(ctx context.Context, req *Request) Response
}

// HandlerFunc lets a plain function serve as a Handler.
type HandlerFunc func(ctx context.Context, req *Request) Response

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) Response { return f(ctx, req) }
