// Package informer builds the informers of arcflow's custom resources, shared
// by the worker's watchers and the webhook's HRA index.
package informer
