-- The data set the differential cases were recorded on (tests/testdata/restdiff/README.md):
-- topic 0.0.7 with 30 messages (more than a default page), 0.0.8 (no entity row, no message),
-- 0.0.9 (no custom fee, no message), 0.0.10 (a message, no entity row); schedules 0.0.100
-- (pending, two signatures), 0.0.101 (executed, no entity row) and 0.0.102 to 0.0.131
-- (pending, so that the list pages). Loaded with triggers off, as a dump is: the lookup rows are here.
-- Topics 0.0.7 (every detail field) and 0.0.9 (no custom fee) have entity rows, 0.0.8 not.
INSERT INTO entity (id, num, realm, shard, type, memo, deleted, created_timestamp, timestamp_range, auto_renew_account_id, auto_renew_period, key)
SELECT id, id, 0, 0, kind::entity_type, memo, false, created, int8range(created, NULL), renew_account, renew_period, key
FROM (VALUES (7, 'TOPIC', 'differential topic', 2000000000, 801, 8000000, NULL::bytea),
             (9, 'TOPIC', '', 6, NULL, NULL, NULL),
             (100, 'SCHEDULE', 'pending', 1700000000000000100, NULL, NULL, '\x12200303030303030303030303030303030303030303030303030303030303030303'::bytea))
  AS e (id, kind, memo, created, renew_account, renew_period, key);
INSERT INTO entity (id, num, realm, shard, type, memo, deleted, created_timestamp, timestamp_range, key)
SELECT n, n, 0, 0, 'SCHEDULE', 'schedule ' || n, false, 1700000000000000000 + n * 1000, int8range(1700000000000000000 + n * 1000, NULL), NULL
FROM generate_series(102, 131) AS n;
INSERT INTO topic (id, created_timestamp, timestamp_range, admin_key, submit_key, fee_schedule_key, fee_exempt_key_list)
VALUES (7, 2000000000, '[2000000000,)', '\x3a21030404040404040404040404040404040404040404040404040404040404040404',
        '\x12200505050505050505050505050505050505050505050505050505050505050505', '\x12200606060606060606060606060606060606060606060606060606060606060606', NULL),
       (8, 2, '[2,)', NULL, NULL, NULL, NULL),
       (9, 6, '[6,)', NULL, NULL, NULL, NULL);
INSERT INTO custom_fee (entity_id, fixed_fees, timestamp_range)
VALUES (7, '[{"all_collectors_are_exempt":true,"amount":250,"collector_account_id":1101,"denominating_token_id":1102}]', '[2000000000,)'),
       (8, '[]', '[2,)');
INSERT INTO topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version, payer_account_id, topic_id)
SELECT 1700000000000000000 + n, convert_to('message ' || n, 'UTF8'), '\x01', n, 3, 2, 7
FROM generate_series(1, 30) AS n;
INSERT INTO topic_message (consensus_timestamp, message, running_hash, sequence_number, running_hash_version, payer_account_id, topic_id)
VALUES (1700000001000000001, 'hi 1', '\x01', 1, 3, 2, 10);
INSERT INTO topic_message_lookup (partition, sequence_number_range, timestamp_range, topic_id)
VALUES ('topic_message_p2023_11', '[1,31)', '[1700000000000000001,1700000000000000031)', 7),
       ('topic_message_p2023_11', '[1,2)', '[1700000001000000001,1700000001000000002)', 10);
INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
SELECT consensus_timestamp, 27, 22, 2, consensus_timestamp - 10, topic_id FROM topic_message;
INSERT INTO schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, executed_timestamp, expiration_time, transaction_body, wait_for_expiry)
VALUES (100, 1700000000000000100, 2, 3, NULL, 4000000000000000000, '\x0a0b0c', true),
       (101, 1700000000000000200, 2, 2, 1700000000000000300, NULL, '\x00', false);
INSERT INTO schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, executed_timestamp, expiration_time, transaction_body, wait_for_expiry)
SELECT n, 1700000000000000000 + n * 1000, 2 + n % 3, 3, NULL, 4000000000000000000, '\x0a', false
FROM generate_series(102, 131) AS n;
INSERT INTO transaction_signature (consensus_timestamp, public_key_prefix, entity_id, signature, type)
VALUES (1700000000000000100, '\x0102', 100, '\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f', 3),
       (1700000000000000101, '\x03', 100, '\x04', NULL);
