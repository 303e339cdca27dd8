package main

import (
	"net/http"
	"sync/atomic"
)

// calls counts the reviews a handler is sent.
type calls struct {
	h http.Handler
	n atomic.Int64
}

func (c *calls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}
