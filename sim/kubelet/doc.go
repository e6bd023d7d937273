// Package kubelet does to nodes and pods what a kubelet would and kwok's stages do
// not: a node kwok plays, waiting for it to be Ready, and a pod's containers ending
// as a runner's exit ends them. The simulated runners and the local stack share it,
// so neither reaches into the other.
package kubelet
