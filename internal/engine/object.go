package engine

import (
	"errors"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

var errNoObject = errors.New("the request has no object")

// metaOf returns the metadata of the request's object (its old object for a
// DELETE) and of its old object, as the request read them.
func metaOf(req *admission.Request) (obj, old *admission.ObjectMeta, err error) {
	if obj, old, err = req.Meta(); err != nil {
		return nil, nil, err
	}
	if obj == nil {
		obj = old // DELETE: the object is gone, oldObject has it
	}
	if obj == nil {
		return nil, nil, errNoObject
	}
	return obj, old, nil
}
