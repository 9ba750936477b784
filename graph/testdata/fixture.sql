-- Fixture of the graph package's resolver tests: two topics with entity rows
-- (0.0.7 full, 0.0.8 bare), messages of 0.0.7 (a 3-chunk group in the
-- protobuf form among them) and of 0.0.9 (no entity row; a legacy 2-chunk group
-- whose second chunk is missing), one submit transaction, four schedules.
-- Every row is one both layouts hold (v2's payer_account_id is NOT NULL):
-- TestNullPayer writes v1's message without a payer.
INSERT INTO entity (id, num, realm, shard, type, memo, deleted, auto_renew_account_id, auto_renew_period,
  created_timestamp, timestamp_range, key)
VALUES (7, 7, 0, 0, 'TOPIC', 'topic seven', false, 98, 7776000, 1234567880000000001, '[1234567880000000001,)', NULL),
       (8, 8, 0, 0, 'TOPIC', '', NULL, NULL, NULL, NULL, '[1234567880000000002,)', NULL),
       (98, 98, 0, 0, 'ACCOUNT', 'payer', false, NULL, NULL, 1, '[1,)', NULL),
       (2000, 2000, 0, 0, 'SCHEDULE', 'executed one', false, NULL, NULL, NULL, '[0,)', '\x12201111111111111111111111111111111111111111111111111111111111111111'),
       (2002, 2002, 0, 0, 'SCHEDULE', 'deleted one', true, NULL, NULL, NULL, '[0,)', '\x010101'),
       (2003, 2003, 0, 0, 'SCHEDULE', 'pending one', false, NULL, NULL, NULL, '[0,)', NULL);
INSERT INTO topic (id, admin_key, submit_key, fee_schedule_key, fee_exempt_key_list, created_timestamp, timestamp_range)
VALUES (7, '\x12201111111111111111111111111111111111111111111111111111111111111111', '\x3a21022222222222222222222222222222222222222222222222222222222222222222', NULL, '\x0a22122011111111111111111111111111111111111111111111111111111111111111110a233a210222222222222222222222222222222222222222222222222222222222222222220a023200', 1234567880000000001, '[1234567880000000001,)');
INSERT INTO custom_fee (entity_id, fixed_fees, timestamp_range)
VALUES (7, '[{"amount": 10, "collector_account_id": 98, "denominating_token_id": null}, {"amount": 3, "collector_account_id": 98, "denominating_token_id": 1901}]', '[1234567880000000001,)');
INSERT INTO topic_message (topic_id, sequence_number, consensus_timestamp, message, running_hash, running_hash_version,
  chunk_num, chunk_total, payer_account_id, valid_start_timestamp, initial_transaction_id)
VALUES (7, 1, 1234567890000000001, '\x68656c6c6f', '\x0102', 3, NULL, NULL, 98, NULL, NULL),
       (7, 2, 1234567890000000002, '\xff68c3a9', '\x0304', NULL, NULL, NULL, 98, NULL, NULL),
       (7, 3, 1234567890000000003, '\x6368', '\x0506', 3, 1, 3, 98, NULL, '\x0a0608d285d8cc041202180318012001'),
       (7, 4, 1234567890000000004, '\x756e', '\x0708', 3, 2, 3, 98, NULL, '\x0a0608d285d8cc041202180318012001'),
       (7, 5, 1234567890000000005, '\x6b73', '\x090a', 3, 3, 3, 98, NULL, '\x0a0608d285d8cc041202180318012001'),
       (9, 1, 1234567890000000011, '\x6c65', '\x0b0c', 2, 1, 2, 98, 1234567880000000000, NULL),
       (9, 2, 1234567890000000012, '\x7a7a', '\x0d0e', 2, NULL, NULL, 99, NULL, NULL);
INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
VALUES (1234567890000000002, 27, 22, 98, 1234567880000000000, 7),
       (1234567890000000003, 27, 10, 98, 1234567880000000000, 7);
INSERT INTO schedule (schedule_id, consensus_timestamp, creator_account_id, payer_account_id, executed_timestamp,
  expiration_time, transaction_body, wait_for_expiry)
VALUES (2000, 1234567800000000001, 98, 98, 1234567800000000009, NULL, '\x0a0b0c', false),
       (2001, 1234567800000000002, 98, 99, NULL, 1234567900000000000, '\x0d', true),
       (2002, 1234567800000000003, 99, 98, NULL, NULL, '\x0e', false),
       (2003, 1234567800000000004, 99, 99, NULL, 2234567800000000000, '\x0f', false);
INSERT INTO transaction_signature (entity_id, consensus_timestamp, public_key_prefix, signature, type)
VALUES (2000, 1234567800000000001, '\x0102', '\x33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333', 3),
       (2000, 1234567800000000005, '\x0304', '\x0506', NULL),
       (2003, 1234567800000000004, '\x07', '\x08', 6);
