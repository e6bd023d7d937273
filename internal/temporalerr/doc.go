// Package temporalerr tells what a failed Temporal call means to an operator:
// Temporal cannot be reached (wait, it comes back) or it is reachable but not
// set up for arcflow (its namespace or a search attribute is missing, which no
// wait mends). The worker's conditions and the webhook's 503 bodies say which.
package temporalerr
