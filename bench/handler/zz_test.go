package handler

import (
	"math/rand/v2"
	"net/http"
	"testing"
)

const zzNested = `query($t: EntityId!, $gt: Long!) { topic(id: $t) { id memo messages(first: 100, sequenceNumber: {gt: $gt}) { ` +
	`nodes { consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion payerAccountId ` +
	`chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } } } pageInfo { hasNextPage endCursor } } } }`

func BenchmarkZZNested(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(zzNested, map[string]any{"t": hotTopic, "gt": r.IntN(499_900)})
	})
}
