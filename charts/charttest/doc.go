// Package charttest checks the Helm chart charts/mirrorql with Helm's own Go
// packages: it lints and renders the chart, decodes every object strictly into
// its API type, evaluates the rendered routes with Traefik's own rule parser
// and muxer beside the mirror node's Ingresses and as Gateway API
// implementations do, against mirrorql's router, runs promtool over the alerts,
// and compares the metric names of the alerts and the dashboard with those a
// running mirrorql exports. It is a module of its own so that Helm and the
// Kubernetes API types stay out of the service's go.mod.
package charttest
