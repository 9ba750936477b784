// Package model holds the value types of the mirror node ledger data and the one
// implementation of each rule that turns them into wire values (entity ids,
// timestamps, keys, message encodings), shared by the REST and GraphQL faces.
package model
