package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"mirrorql/tests/testdb"
)

// restData is a small data set for the cases below: topic 0.0.7 with every
// detail field, topics 0.0.8 (no entity row) and 0.0.9 (no custom fee), topic
// 0.0.10 with a message but no entity (a partial mirror), schedules 0.0.100
// (pending, two signatures) and 0.0.101 (executed, no entity row).
const restData = `
INSERT INTO entity (id, num, realm, shard, type, memo, deleted, created_timestamp, timestamp_range, auto_renew_account_id, auto_renew_period, key)
VALUES (7, 7, 0, 0, 'TOPIC', 'topic memo', false, 0, '[1000000000,)', 98, 7776000, NULL),
       (9, 9, 0, 0, 'TOPIC', '', false, 5, '[5,)', NULL, NULL, NULL),
       (100, 100, 0, 0, 'SCHEDULE', 'pending', false, 1700000000000000100, '[1700000000000000100,)', NULL, NULL, '\x12200101010101010101010101010101010101010101010101010101010101010101');
INSERT INTO topic (id, admin_key, submit_key, fee_schedule_key, fee_exempt_key_list, created_timestamp, timestamp_range)
VALUES (7, '\x12200101010101010101010101010101010101010101010101010101010101010101', '\x3a21020202020202020202020202020202020202020202020202020202020202020202', NULL, '\x0a22122001010101010101010101010101010101010101010101010101010101010101010a233a21020202020202020202020202020202020202020202020202020202020202020202', 0, '[1000000000,)'),
       (8, NULL, NULL, NULL, NULL, 1, '[1,)'),
       (9, NULL, NULL, NULL, NULL, 5, '[5,)');
INSERT INTO custom_fee (entity_id, fixed_fees, timestamp_range)
VALUES (7, '[{"all_collectors_are_exempt":false,"amount":100,"collector_account_id":1001,"denominating_token_id":null},{"amount":5,"collector_account_id":1002,"denominating_token_id":1003}]', '[1000000000,)'),
       (8, '[]', '[1,)');
INSERT INTO topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version, payer_account_id, topic_id)
VALUES (1700000000000000001, 'hi 1', '\x01', 1, 3, 2, 7),
       (1700000000000000002, 'hi 2', '\x01', 2, 3, 2, 7),
       (1700000000000000003, 'hi 3', '\x01', 3, 3, 2, 7),
       (1700000000000000004, 'hi 4', '\x01', 4, 3, 2, 7),
       (1700000000000000005, '\xc328', '\x01', 5, NULL, 2, 7),
       (1700000001000000001, 'hi 1', '\x01', 1, 3, 2, 10);
INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
SELECT consensus_timestamp, 27, 22, 2, consensus_timestamp - 10, topic_id FROM topic_message;
INSERT INTO schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, executed_timestamp, expiration_time, transaction_body, wait_for_expiry)
VALUES (100, 1700000000000000100, 2, 3, NULL, 4000000000000000000, '\x0a0b0c', true),
       (101, 1700000000000000200, 2, 2, 1700000000000000300, NULL, '\x00', false);
INSERT INTO transaction_signature (consensus_timestamp, public_key_prefix, entity_id, signature, type)
VALUES (1700000000000000100, '\x0102', 100, '\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f', 3),
       (1700000000000000101, '\x03', 100, '\x04', NULL);
`

func seedREST(t *testing.T, b *bun.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.DB.ExecContext(ctx, "TRUNCATE entity, schedule, transaction_signature, topic_message, topic_message_lookup, transaction, topic, custom_fee"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.ExecContext(ctx, restData); err != nil {
		t.Fatal(err)
	}
}

func errBody(messages ...string) string {
	parts := make([]string, len(messages))
	for i, m := range messages {
		parts[i] = `{"message":` + jsonString(m) + `}`
	}
	return `{"_status":{"messages":[` + strings.Join(parts, ",") + `]}}`
}

func javaErr(message, detail string) string {
	return `{"_status":{"messages":[{"message":` + jsonString(message) + `,"detail":` + jsonString(detail) + `}]}}`
}

func jsonString(s string) string { return string(mustJSON(s)) }

func page(items, next string) string {
	n := "null"
	if next != "" {
		n = jsonString(next)
	}
	return `{"messages":[` + items + `],"links":{"next":` + n + `}}`
}

type restCase struct {
	name    string
	url     string
	limited bool
	header  []string
	status  int
	body    string
	headers map[string]string
}

var restCases = []restCase{
	{name: "list all", url: "/api/v1/topics/7/messages", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000002","message":"aGkgMg==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000003","message":"aGkgMw==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":3,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000004","message":"aGkgNA==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":4,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"wyg=","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"}`, ""), headers: map[string]string{"Cache-Control": "public, max-age=1", "Link": ""}},
	{name: "list limited first page", url: "/api/v1/topics/7/messages?limit=2", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000002","message":"aGkgMg==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"}`, "/api/v1/topics/7/messages?limit=2&timestamp=gt:1700000000.000000002"), headers: map[string]string{"Link": "</api/v1/topics/7/messages?limit=2&timestamp=gt:1700000000.000000002>; rel=\"next\""}, limited: true},
	{name: "list default limit of the limited profile", url: "/api/v1/topics/7/messages?order=DESC", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"wyg=","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000004","message":"aGkgNA==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":4,"topic_id":"0.0.7"}`, "/api/v1/topics/7/messages?order=desc&timestamp=lt:1700000000.000000004"), limited: true},
	{name: "list capped at max", url: "/api/v1/topics/7/messages?limit=1000", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000002","message":"aGkgMg==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000003","message":"aGkgMw==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":3,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000004","message":"aGkgNA==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":4,"topic_id":"0.0.7"}`, "/api/v1/topics/7/messages?limit=1000&timestamp=gt:1700000000.000000004"), limited: true},
	{name: "sequence filter walks sequence order", url: "/api/v1/topics/7/messages?sequencenumber=gt:2&limit=2", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000003","message":"aGkgMw==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":3,"topic_id":"0.0.7"},{"chunk_info":null,"consensus_timestamp":"1700000000.000000004","message":"aGkgNA==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":4,"topic_id":"0.0.7"}`, "/api/v1/topics/7/messages?sequencenumber=gt:2&limit=2&timestamp=gt:1700000000.000000004"), limited: true},
	{name: "case-insensitive path and keys, trailing slash", url: "/API/V1/TOPICS/7/MESSAGES/?LIMIT=1&SequenceNumber=lt:3", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"}`, "/API/V1/TOPICS/7/MESSAGES?limit=1&sequencenumber=lt:3&timestamp=gt:1700000000.000000001")},
	{name: "short topic ids", url: "/api/v1/topics/0.7/messages?sequencenumber=1", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"}`, "")},
	{name: "ne and repeated filters", url: "/api/v1/topics/00007/messages?sequencenumber=ne:1&sequencenumber=lt:3&timestamp=gte:1700000000", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000002","message":"aGkgMg==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"}`, "")},
	// "DECISIONS n" names a row of docs/reference/DECISIONS.md.
	{name: "DECISIONS 1: sequence number 0 in a filter", url: "/api/v1/topics/7/messages?sequencenumber=0", status: 200, body: page(``, "")},
	{name: "DECISIONS 1: sequence number 0 in the path", url: "/api/v1/topics/7/messages/0", status: 404, body: errBody("Not found")},
	{name: "DECISIONS 2: unknown topic", url: "/api/v1/topics/0.0.999/messages", status: 404, body: errBody("No such topic id - 0.0.999")},
	{name: "DECISIONS 2: empty page of a known topic", url: "/api/v1/topics/7/messages?timestamp=gt:1800000000", status: 200, body: page(``, "")},
	{name: "DECISIONS 2: topic without entity row but with messages", url: "/api/v1/topics/10/messages", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000001.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.10"}`, "")},
	{name: "DECISIONS 3: repeated encoding, last wins", url: "/api/v1/topics/7/messages?encoding=base64&encoding=utf-8&sequencenumber=5", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"\ufffd(","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"}`, "")},
	{name: "DECISIONS 4: eq:utf-8 answers UTF-8", url: "/api/v1/topics/7/messages?encoding=eq:UTF8&sequencenumber=5", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"\ufffd(","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"}`, "")},
	{name: "DECISIONS 4: other operators are invalid", url: "/api/v1/topics/7/messages?encoding=ne:utf-8", status: 400, body: errBody("Invalid parameter: encoding")},
	{name: "DECISIONS 5: timestamp overflow in a filter", url: "/api/v1/topics/7/messages?timestamp=9999999999.999999999", status: 400, body: errBody("Invalid parameter: timestamp")},
	{name: "DECISIONS 5: timestamp overflow in the path", url: "/api/v1/topics/messages/9999999999.999999999", status: 400, body: errBody("Invalid parameter: consensus_timestamp")},
	{name: "DECISIONS 6: null running hash version", url: "/api/v1/topics/7/messages/5", status: 200, body: `{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"wyg=","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"}`, headers: map[string]string{"Cache-Control": "public, max-age=600"}},
	{name: "DECISIONS 7: plain timestamp advances", url: "/api/v1/topics/7/messages?timestamp=1700000000.000000001&limit=1", status: 200, body: page(`{"chunk_info":null,"consensus_timestamp":"1700000000.000000001","message":"aGkgMQ==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"}`, "/api/v1/topics/7/messages?timestamp=1700000000.000000001&timestamp=gt:1700000000.000000001&limit=1")},
	{name: "DECISIONS 8: timestamp under a topic", url: "/api/v1/topics/7/messages/1700000000.000000002", status: 200, body: `{"chunk_info":null,"consensus_timestamp":"1700000000.000000002","message":"aGkgMg==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"}`, headers: map[string]string{"Cache-Control": "public, max-age=600"}},
	{name: "DECISIONS 8: timestamp of another topic", url: "/api/v1/topics/8/messages/1700000000.000000002", status: 404, body: errBody("Not found")},
	{name: "DECISIONS 8: bad timestamp under a topic", url: "/api/v1/topics/7/messages/1.2.3", status: 400, body: errBody("Invalid parameter: consensus_timestamp")},
	{name: "by timestamp", url: "/api/v1/topics/messages/1700000000.000000003", status: 200, body: `{"chunk_info":null,"consensus_timestamp":"1700000000.000000003","message":"aGkgMw==","payer_account_id":"0.0.2","running_hash":"AQ==","running_hash_version":3,"sequence_number":3,"topic_id":"0.0.7"}`, headers: map[string]string{"Cache-Control": "public, max-age=600"}},
	{name: "by timestamp, seconds only", url: "/api/v1/topics/messages/1700000000", status: 404, body: errBody("Not found")},
	{name: "topic details", url: "/api/v1/topics/7?ignored=1", status: 200, body: `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"auto_renew_account":"0.0.98","auto_renew_period":7776000,"created_timestamp":"0.0","custom_fees":{"created_timestamp":"1.000000000","fixed_fees":[{"amount":100,"collector_account_id":"0.0.1001","denominating_token_id":null},{"amount":5,"collector_account_id":"0.0.1002","denominating_token_id":"0.0.1003"}]},"deleted":false,"fee_exempt_key_list":[{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},{"_type":"ECDSA_SECP256K1","key":"020202020202020202020202020202020202020202020202020202020202020202"}],"fee_schedule_key":null,"memo":"topic memo","submit_key":{"_type":"ECDSA_SECP256K1","key":"020202020202020202020202020202020202020202020202020202020202020202"},"timestamp":{"from":"1.000000000","to":null},"topic_id":"0.0.7"}`, headers: map[string]string{"Cache-Control": "public, max-age=5", "Content-Type": "application/json"}},
	{name: "topic details by full id", url: "/api/v1/topics/0.0.7", status: 200, body: `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"auto_renew_account":"0.0.98","auto_renew_period":7776000,"created_timestamp":"0.0","custom_fees":{"created_timestamp":"1.000000000","fixed_fees":[{"amount":100,"collector_account_id":"0.0.1001","denominating_token_id":null},{"amount":5,"collector_account_id":"0.0.1002","denominating_token_id":"0.0.1003"}]},"deleted":false,"fee_exempt_key_list":[{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},{"_type":"ECDSA_SECP256K1","key":"020202020202020202020202020202020202020202020202020202020202020202"}],"fee_schedule_key":null,"memo":"topic memo","submit_key":{"_type":"ECDSA_SECP256K1","key":"020202020202020202020202020202020202020202020202020202020202020202"},"timestamp":{"from":"1.000000000","to":null},"topic_id":"0.0.7"}`},
	{name: "topic details without entity", url: "/api/v1/topics/8", status: 404, body: javaErr("Not Found", "Entity not found"), headers: map[string]string{"Content-Type": "application/json"}},
	{name: "topic details without custom fee", url: "/api/v1/topics/9", status: 404, body: javaErr("Not Found", "Custom fee for entity not found")},
	{name: "topic details unknown", url: "/api/v1/topics/0.1000", status: 404, body: javaErr("Not Found", "Topic not found")},
	{name: "topic details bad id", url: "/api/v1/topics/9223372036854775807", status: 400, body: javaErr("Bad Request", "Failed to convert 'id'")},
	{name: "topic details shard too large", url: "/api/v1/topics/1024.0.7", status: 400, body: javaErr("Bad Request", "Failed to convert 'id'")},
	{name: "topic path outside the ingress rule", url: "/api/v1/topics/0.0.0.7", status: 404, body: errBody("Not found")},
	{name: "topic path in upper case goes to Node", url: "/API/V1/TOPICS/7", status: 404, body: errBody("Not found")},
	{name: "topic path with trailing slash goes to Node", url: "/api/v1/topics/7/", status: 404, body: errBody("Not found")},
	{name: "schedule pending", url: "/api/v1/schedules/0.0.100", status: 200, body: `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"deleted":false,"consensus_timestamp":"1700000000.000000100","creator_account_id":"0.0.2","executed_timestamp":null,"expiration_time":"4000000000.000000000","memo":"pending","payer_account_id":"0.0.3","schedule_id":"0.0.100","signatures":[{"consensus_timestamp":"1700000000.000000100","public_key_prefix":"AQI=","signature":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\nOTo7PD0+Pw==","type":"ED25519"},{"consensus_timestamp":"1700000000.000000101","public_key_prefix":"Aw==","signature":"BA==","type":"UNKNOWN"}],"transaction_body":"CgsM","wait_for_expiry":true}`, headers: map[string]string{"Cache-Control": "public, max-age=1"}},
	{name: "schedule without entity row", url: "/api/v1/schedules/101", status: 200, body: `{"admin_key":null,"deleted":null,"consensus_timestamp":"1700000000.000000200","creator_account_id":"0.0.2","executed_timestamp":"1700000000.000000300","expiration_time":null,"memo":null,"payer_account_id":"0.0.2","schedule_id":"0.0.101","signatures":[],"transaction_body":"AA==","wait_for_expiry":false}`, headers: map[string]string{"Cache-Control": "public, max-age=3600"}},
	{name: "schedules list", url: "/api/v1/schedules", status: 200, body: `{"schedules":[` + `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"deleted":false,"consensus_timestamp":"1700000000.000000100","creator_account_id":"0.0.2","executed_timestamp":null,"expiration_time":"4000000000.000000000","memo":"pending","payer_account_id":"0.0.3","schedule_id":"0.0.100","signatures":[{"consensus_timestamp":"1700000000.000000100","public_key_prefix":"AQI=","signature":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\nOTo7PD0+Pw==","type":"ED25519"},{"consensus_timestamp":"1700000000.000000101","public_key_prefix":"Aw==","signature":"BA==","type":"UNKNOWN"}],"transaction_body":"CgsM","wait_for_expiry":true}` + `,` + `{"admin_key":null,"consensus_timestamp":"1700000000.000000200","creator_account_id":"0.0.2","executed_timestamp":"1700000000.000000300","expiration_time":null,"payer_account_id":"0.0.2","schedule_id":"0.0.101","signatures":[],"transaction_body":"AA==","wait_for_expiry":false}` + `],"links":{"next":null}}`, headers: map[string]string{"Cache-Control": "public, max-age=10"}},
	{name: "schedules by creator", url: "/api/v1/schedules?account.id=0.0.2&schedule.id=gte:101&order=desc", status: 200, body: `{"schedules":[` + `{"admin_key":null,"consensus_timestamp":"1700000000.000000200","creator_account_id":"0.0.2","executed_timestamp":"1700000000.000000300","expiration_time":null,"payer_account_id":"0.0.2","schedule_id":"0.0.101","signatures":[],"transaction_body":"AA==","wait_for_expiry":false}` + `],"links":{"next":null}}`},
	{name: "schedules by long-zero evm address", url: "/api/v1/schedules?schedule.id=0x0000000000000000000000000000000000000064", status: 200, body: `{"schedules":[` + `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"deleted":false,"consensus_timestamp":"1700000000.000000100","creator_account_id":"0.0.2","executed_timestamp":null,"expiration_time":"4000000000.000000000","memo":"pending","payer_account_id":"0.0.3","schedule_id":"0.0.100","signatures":[{"consensus_timestamp":"1700000000.000000100","public_key_prefix":"AQI=","signature":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\nOTo7PD0+Pw==","type":"ED25519"},{"consensus_timestamp":"1700000000.000000101","public_key_prefix":"Aw==","signature":"BA==","type":"UNKNOWN"}],"transaction_body":"CgsM","wait_for_expiry":true}` + `],"links":{"next":null}}`},
	{name: "schedules by opaque evm address", url: "/api/v1/schedules?account.id=0xabcdefabcdefabcdefabcdefabcdefabcdefabcd", status: 200, body: `{"schedules":[],"links":{"next":null}}`},
	{name: "schedules paging", url: "/api/v1/schedules?limit=1", status: 200, body: `{"schedules":[` + `{"admin_key":{"_type":"ED25519","key":"0101010101010101010101010101010101010101010101010101010101010101"},"deleted":false,"consensus_timestamp":"1700000000.000000100","creator_account_id":"0.0.2","executed_timestamp":null,"expiration_time":"4000000000.000000000","memo":"pending","payer_account_id":"0.0.3","schedule_id":"0.0.100","signatures":[{"consensus_timestamp":"1700000000.000000100","public_key_prefix":"AQI=","signature":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\nOTo7PD0+Pw==","type":"ED25519"},{"consensus_timestamp":"1700000000.000000101","public_key_prefix":"Aw==","signature":"BA==","type":"UNKNOWN"}],"transaction_body":"CgsM","wait_for_expiry":true}` + `],"links":{"next":"/api/v1/schedules?limit=1&schedule.id=gt:0.0.100"}}`},
	{name: "limit 0", url: "/api/v1/topics/7/messages?limit=0", status: 400, body: errBody("Invalid parameter: limit")},
	{name: "invalid before unknown", url: "/api/v1/topics/7/messages?foo=1&limit=x&order=up&timestamp=1.2.3&sequencenumber=-1&sequencenumber=gt:1:2", status: 400, body: errBody("Invalid parameter: limit", "Invalid parameter: order", "Invalid parameter: timestamp", "Invalid parameter: sequencenumber", "Invalid parameter: sequencenumber", "Unknown query parameter: foo")},
	{name: "object value", url: "/api/v1/topics/7/messages?limit[x]=1", status: 400, body: errBody("Invalid parameter: limit")},
	{name: "depth", url: "/api/v1/topics/7/messages?a[b][c]=1", status: 400, body: errBody("Input depth exceeded depth option of 1 and strictDepth is true")},
	{name: "array limit", url: "/api/v1/topics/7/messages?limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1&limit=1", status: 400, body: errBody("Array limit exceeded. Only 100 elements allowed in an array.")},
	{name: "topic id pre-check wins", url: "/api/v1/topics/0x07/messages?limit=0", status: 400, body: errBody("Invalid parameter: topic.id")},
	{name: "topic id parse error", url: "/api/v1/topics/-5/messages", status: 400, body: errBody("Invalid entity ID \"0.0.-5\"")},
	{name: "topic num too large", url: "/api/v1/topics/274877906944/messages", status: 400, body: errBody("Invalid entity ID \"0.0.274877906944\"")},
	{name: "single route: unknown parameter first", url: "/api/v1/topics/x/messages/y?b=1&a=2", status: 400, body: errBody("Unknown query parameter: b", "Unknown query parameter: a")},
	{name: "single route: both path errors", url: "/api/v1/topics/0.0.-3/messages/a", status: 400, body: errBody("Invalid parameter: topic.id", "Invalid parameter: sequencenumber")},
	{name: "sequence number overflow", url: "/api/v1/topics/7/messages/9223372036854775808", status: 400, body: errBody("Invalid parameter: sequencenumber")},
	{name: "bad path timestamp", url: "/api/v1/topics/messages/123abc", status: 400, body: errBody("Invalid parameter: consensus_timestamp")},
	{name: "schedules bad values", url: "/api/v1/schedules?account.id=-92233720368547758080&schedule.id=x.y.z&order=d&limit=-1&timestamp=1234", status: 400, body: errBody("Invalid parameter: account.id", "Invalid parameter: schedule.id", "Invalid parameter: order", "Invalid parameter: limit", "Unknown query parameter: timestamp")},
	{name: "schedules parse error", url: "/api/v1/schedules?account.id=-1", status: 400, body: errBody("Invalid entity ID \"0.0.-1\"")},
	{name: "schedule evm path", url: "/api/v1/schedules/0x0000000000000000000000000000000000000064", status: 400, body: errBody("Invalid parameter: scheduleid")},
	{name: "schedule 4-part id", url: "/api/v1/schedules/0.7.8.9", status: 400, body: errBody("Invalid parameter: scheduleid")},
	{name: "schedule not found", url: "/api/v1/schedules/0.0.7", status: 404, body: errBody("Not found")},
	{name: "unknown route", url: "/api/v1/accounts", status: 404, body: errBody("Not found")},
	{name: "unknown explorer asset", url: "/graphql/explorer/nope.js", status: 404, body: errBody("Not found")},
	{name: "messages without timestamp", url: "/api/v1/topics/messages", status: 404, body: errBody("Not found")},
	{name: "liveness", url: "/health/liveness", status: 200, body: ""},
	{name: "readiness", url: "/health/readiness", status: 200, body: ""},
}

// TestRESTNullPayer: a message without a payer, which v1's topic_message
// holds (its payer_account_id is nullable; the importer's v2 schema's is
// not), renders "payer_account_id": null, on the message's route and in a
// page (DECISIONS 6).
func TestRESTNullPayer(t *testing.T) {
	t.Parallel()
	url, b := testdb.NewLayout(t, testdb.LayoutV1)
	seedREST(t, b)
	if _, err := b.ExecContext(context.Background(),
		"UPDATE topic_message SET payer_account_id = NULL WHERE topic_id = 7 AND sequence_number = 5"); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, url)
	const msg = `{"chunk_info":null,"consensus_timestamp":"1700000000.000000005","message":"wyg=","payer_account_id":null,"running_hash":"AQ==","running_hash_version":3,"sequence_number":5,"topic_id":"0.0.7"}`
	for target, want := range map[string]string{
		"/api/v1/topics/7/messages/5":                msg,
		"/api/v1/topics/7/messages?sequencenumber=5": page(msg, ""),
	} {
		status, _, body := get(t, s.URL+target)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", target, status, body)
		}
		assertJSONEqual(t, body, want)
	}
}

// servesRESTCases starts the service on dbURL twice, with the default page
// sizes and with the limited profile's, and fails unless every case of
// restCases answers as recorded, then reads GraphQL from it; what names the
// setting in failures.
func servesRESTCases(t *testing.T, what, dbURL string, env ...string) {
	t.Helper()
	env = append([]string{"MIRRORQL_CACHE_ENABLED=false"}, env...)
	def := startServer(t, dbURL, env...)
	limited := startServer(t, dbURL, append(env, "MIRRORQL_RESPONSE_LIMIT_DEFAULT=2", "MIRRORQL_RESPONSE_LIMIT_MAX=4")...)
	for _, tc := range restCases {
		base := def.URL
		if tc.limited {
			base = limited.URL
		}
		status, _, body := get(t, base+tc.url, tc.header...)
		if status != tc.status {
			t.Errorf("%s: %s (%s): status %d, want %d: %s", what, tc.url, tc.name, status, tc.status, body)
			continue
		}
		if tc.body != "" {
			assertJSONEqual(t, body, tc.body)
		}
	}
	graphQLReads(t, what, def.URL)
}
