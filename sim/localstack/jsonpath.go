package localstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/jsonpath"
)

// JSONPath reads one object of resource (a kubectl name: "hra", "rdeploy",
// "deploy", "pods"), or all of them in namespace when name is empty, and
// prints template over it as `kubectl get -o jsonpath=template` does. It
// reads in this process: tests poll such reads every few hundred
// milliseconds, and a kubectl process costs about 0.15 CPU-seconds each
// (measured), which made kubectl the largest user of CPU in `make test`.
// A missing object is the API's NotFound error (apierrors.IsNotFound).
func (s *Stack) JSONPath(ctx context.Context, namespace, resource, name, template string) (string, error) {
	s.readerOnce.Do(func() { s.reader, s.readerErr = newObjectReader(s) })
	if s.readerErr != nil {
		return "", s.readerErr
	}
	return s.reader.jsonPath(ctx, namespace, resource, name, template)
}

// objectReader maps kubectl's resource names, short ones included, to API
// resources through a cached discovery, and reads them with a dynamic client.
type objectReader struct {
	client   dynamic.Interface
	deferred *restmapper.DeferredDiscoveryRESTMapper
	mapper   meta.RESTMapper
}

func newObjectReader(s *Stack) (*objectReader, error) {
	if s.RESTConfig == nil {
		return nil, errors.New("the stack runs no Kubernetes")
	}
	client, err := dynamic.NewForConfig(s.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(s.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	cache := memory.NewMemCacheClient(disco)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cache)
	return &objectReader{client: client, deferred: deferred, mapper: restmapper.NewShortcutExpander(deferred, cache, nil)}, nil
}

func (r *objectReader) jsonPath(ctx context.Context, namespace, resource, name, template string) (string, error) {
	gvr, err := r.mapper.ResourceFor(schema.GroupVersionResource{Resource: resource})
	if meta.IsNoMatchError(err) {
		// A CRD installed after the cache was filled: read discovery again.
		r.deferred.Reset()
		gvr, err = r.mapper.ResourceFor(schema.GroupVersionResource{Resource: resource})
	}
	if err != nil {
		return "", fmt.Errorf("resource %q: %w", resource, err)
	}
	var data any
	if name == "" {
		list, err := r.client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", fmt.Errorf("list %s in %s: %w", resource, namespace, err)
		}
		data = list.UnstructuredContent()
	} else {
		obj, err := r.client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get %s %s/%s: %w", resource, namespace, name, err)
		}
		data = obj.UnstructuredContent()
	}
	// As kubectl: a key missing on the path prints nothing rather than failing.
	path := jsonpath.New(resource).AllowMissingKeys(true)
	if err := path.Parse(template); err != nil {
		return "", fmt.Errorf("jsonpath %s: %w", template, err)
	}
	var out bytes.Buffer
	if err := path.Execute(&out, data); err != nil {
		return "", fmt.Errorf("jsonpath %s on %s %s/%s: %w", template, resource, namespace, name, err)
	}
	return out.String(), nil
}
