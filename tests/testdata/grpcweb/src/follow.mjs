// Follows a topic over gRPC-Web with connect-web: the bundle the browser
// test's page loads (tests/testdata/grpcweb/README.md says how it is built).
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { ConsensusService } from "./gen/consensus_service_pb.js";

// followTopic subscribes to topic 0.0.num at baseUrl from now on, calling
// onMessage with each message and onState as the stream moves on.
async function followTopic(baseUrl, num, onMessage, onState) {
  const client = createClient(ConsensusService, createGrpcWebTransport({ baseUrl }));
  onState("subscribing");
  try {
    const text = new TextDecoder();
    for await (const m of client.subscribeTopic({ topicID: { topicNum: BigInt(num) } })) {
      onMessage({ sequenceNumber: m.sequenceNumber.toString(), message: text.decode(m.message) });
    }
    onState("complete");
  } catch (e) {
    onState("error: " + e.message);
  }
}

window.followTopic = followTopic;
