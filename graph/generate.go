// Package graph is the GraphQL face: the schema (schema.graphqls), gqlgen's
// generated executor, thin resolvers over the db query layer, the request's
// dataloaders, the server's limits and the embedded GraphiQL explorer.
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate --config gqlgen.yml"
