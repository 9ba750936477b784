// Package seed fills a mirror node database (the tables of docs/reference/schema.md) with a
// deterministic, realistic data set of accounts, topics, topic messages and
// schedules, streamed through COPY, for tests, demos and benchmarks.
//
// The same Options always give the same rows, byte for byte: every value is
// derived from (Seed, what the row is, its position), never from a clock or
// from the order in which rows are generated.
//
// # Ids
//
// Entity nums, encoded with Options.Shard and Options.Realm (0.0 by default):
//
//	0.0.1001 – 0.0.1100   100 accounts (ACCOUNT): payers, creators, fee collectors, auto-renew accounts
//	0.0.1901 – 0.0.1905   5 tokens (TOKEN): denominations of token custom fees
//	0.0.2001 – …          Options.Topics topics (TOPIC): TopicID(i) = 2001 + i
//	0.0.3001 – …          Options.Schedules schedules (SCHEDULE): ScheduleID(j) = FirstScheduleNum() + j,
//	                      3001 + j while Topics ≤ 1000
//
// # Timeline
//
// With T0 = Options.BaseTimestamp (ns):
//
//	T0-90d …              accounts created, one an hour
//	T0-60d …              tokens created, one an hour
//	T0-30d … T0-1h        schedules created (ScheduleTimestamp), evenly spread
//	T0 + i·60s + <1s      topic i created (TopicCreatedTimestamp), with a
//	                      CONSENSUSCREATETOPIC transaction (type 24, result 22) at that instant
//	MessagesStart() …     messages and failed submissions, over about 30 days (MessageTimestamp)
//
// Message timestamps are unique across all topics: topic i only uses instants
// whose remainder modulo (Topics+1) ms, counted from MessagesStart, lies in
// [i ms, i+1 ms); the last class holds the failed submissions (a transaction
// with type 27 and result 7, 10, 150 or 163, and no message). Within its class
// each event falls at a random instant of its own period, so the topics
// interleave irregularly; rows are written in global timestamp order.
//
// # Topics
//
// Topic i holds TopicMessages(i) messages, sequence numbers 1..N. A topic of
// 8 messages or more starts with a fixed prelude: 1 UTF-8 text, 2 a JSON
// document, 3 binary (invalid UTF-8), 4–6 a 3-chunk group in the new form
// (initial_transaction_id set, valid_start_timestamp NULL), 7–8 a 2-chunk
// group in the legacy form (initial_transaction_id NULL, valid_start_timestamp
// and payer_account_id of each chunk's own transaction). After it, of the
// message starts about 56.5% are text, 25% JSON, 10% binary, 5% single chunks
// (1 of 1) and 3.5% 2–5-chunk groups; a quarter of the chunk groups are in the
// legacy form, a few of the others have scheduled=true and a nonce. Chunks are 1024 bytes but the last one;
// running_hash is 48 bytes and running_hash_version 3, NULL for about 0.5%.
// Every message has a transaction row (type 27, result 22, entity_id = topic).
//
// Keys, memos and flags cycle with i (topic 0: ED25519 admin key, no submit
// key, no fee schedule key, no fee-exempt list, custom fees `[]`, live):
// admin_key cycles ED25519, ECDSA_SECP256K1, NULL, 1-element KeyList,
// 2-of-3 ThresholdKey, 0x3200, 1-of-1 ThresholdKey, ED25519, 2-key KeyList,
// contract key; every tenth topic (i%10 == 9) is deleted and i%23 == 22 has
// deleted NULL; fixed_fees is `[]` for i%4 < 2, one HBAR fee for i%4 == 2,
// an HBAR and a token fee for i%4 == 3, and NULL for i%13 == 7.
//
// # Schedules
//
// Schedule j is in state j%6: 0 pending (expiration ~100 years after T0),
// 1 executed, 2 pending with wait_for_expiry, 3 expired (expiration before
// T0), 4 deleted (entity.deleted), 5 legacy (expiration_time NULL). It has
// (j+3)%5 signatures, at distinct timestamps from its creation on, whose type
// codes cycle through 2..6 and NULL, 32 or 64 bytes long. The admin key
// (entity.key) cycles ED25519, ECDSA, 2-of-3 ThresholdKey, NULL, 1-element
// KeyList, ED25519, contract key.
package seed

import "time"

// Fixed parts of the layout (nums before encoding with shard and realm).
const (
	FirstAccountNum = 1001
	Accounts        = 100
	FirstTokenNum   = 1901
	Tokens          = 5
	FirstTopicNum   = 2001

	// DefaultBaseTimestamp is 2023-11-14T22:13:20Z.
	DefaultBaseTimestamp int64 = 1_700_000_000_000_000_000

	// Transaction types and results written to `transaction`.
	TypeConsensusCreateTopic   = 24
	TypeConsensusSubmitMessage = 27
	ResultSuccess              = 22
)

const (
	second = int64(time.Second)
	minute = 60 * second
	hour   = 60 * minute
	day    = 24 * hour
	year   = 365 * day

	messageSpan = 30 * day                // messages of every topic spread over this
	slot        = int64(time.Millisecond) // width of one topic's timestamp class
	chunkSize   = 1024                    // SDK default chunk size
	firstNode   = 3                       // node accounts 0.0.3 … 0.0.9
	nodes       = 7
)
