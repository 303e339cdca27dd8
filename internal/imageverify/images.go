package imageverify

import (
	"encoding/json"
	"fmt"
)

// Image is one container image a workload runs, and where it is named.
type Image struct {
	// Ref is the image as written, e.g. registry.example.com/app:1.2.
	Ref string
	// Path is the field that names it, e.g. spec.initContainers[0].image.
	Path string
}

type container struct {
	Image string `json:"image"`
}

type podSpec struct {
	InitContainers      []container `json:"initContainers"`
	Containers          []container `json:"containers"`
	EphemeralContainers []container `json:"ephemeralContainers"`
	ServiceAccountName  string      `json:"serviceAccountName"`
	ImagePullSecrets    []struct {
		Name string `json:"name"`
	} `json:"imagePullSecrets"`
}

// Workload is what a Pod, or a workload's Pod template, says of its
// images: the images, and whose credentials the kubelet pulls them with.
type Workload struct {
	Images []Image
	// ServiceAccount is spec.serviceAccountName ("" for default), whose
	// imagePullSecrets the kubelet uses too.
	ServiceAccount string
	// PullSecrets are the names in spec.imagePullSecrets.
	PullSecrets []string
}

// Images lists the images of a Pod, or of the Pod template of a
// workload, as Inspect does.
func Images(object []byte) ([]Image, error) {
	w, err := Inspect(object)
	return w.Images, err
}

// Inspect reads a Pod, or the Pod template of a workload (spec.template,
// or a CronJob's spec.jobTemplate.spec.template): its images in the order
// the fields appear (init containers, containers, ephemeral containers)
// and its pull credentials. An object with no Pod spec has none.
func Inspect(object []byte) (Workload, error) {
	var doc struct {
		Kind string `json:"kind"`
		Spec struct {
			podSpec
			Template *struct {
				Spec podSpec `json:"spec"`
			} `json:"template"`
			JobTemplate *struct {
				Spec struct {
					Template struct {
						Spec podSpec `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(object, &doc); err != nil {
		return Workload{}, fmt.Errorf("reading the object's images: %w", err)
	}
	spec, prefix := &doc.Spec.podSpec, "spec."
	switch {
	case doc.Kind == "Pod":
	case doc.Spec.JobTemplate != nil:
		spec, prefix = &doc.Spec.JobTemplate.Spec.Template.Spec, "spec.jobTemplate.spec.template.spec."
	case doc.Spec.Template != nil:
		spec, prefix = &doc.Spec.Template.Spec, "spec.template.spec."
	}
	out := Workload{ServiceAccount: spec.ServiceAccountName}
	for _, s := range spec.ImagePullSecrets {
		out.PullSecrets = append(out.PullSecrets, s.Name)
	}
	for _, l := range []struct {
		field string
		cs    []container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}, {"ephemeralContainers", spec.EphemeralContainers}} {
		for i, c := range l.cs {
			out.Images = append(out.Images, Image{Ref: c.Image, Path: fmt.Sprintf("%s%s[%d].image", prefix, l.field, i)})
		}
	}
	return out, nil
}
