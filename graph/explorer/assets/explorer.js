// Mounts GraphiQL on #graphiql, pointed at the endpoint in its data-endpoint
// attribute: queries over HTTP, subscriptions over a WebSocket to the same
// endpoint (graphql-transport-ws, from graphql-ws.min.js). URL parameters:
// `query` and `variables` fill the editors; `run=1` executes the operation
// once the page is ready, a subscription too (used by the browser tests and
// by shared links).
(function () {
  'use strict';
  var root = document.getElementById('graphiql');
  var endpoint = new URL(root.getAttribute('data-endpoint'), window.location.href);
  var socket = new URL(endpoint.toString());
  socket.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';
  var params = new URLSearchParams(window.location.search);
  var wsClient = graphqlWs.createClient({
    url: socket.toString(),
    // Connect with the first subscription, close after the last.
    lazy: true,
    // A followed topic should survive a restart of the server or a dropped
    // connection for as long as the tab follows it; the client subscribes
    // again after reconnecting. The wait doubles up to 30 s (the library's
    // own doubles without bound), with jitter so that many tabs do not come
    // back at once. An error the server answers ends the operation, not the
    // connection; a close saying the request itself is wrong (4400 Bad
    // request, 4406 Subprotocol not acceptable, 4500 …) is not retried.
    retryAttempts: Infinity,
    retryWait: function (retries) {
      var wait = Math.min(1000 * Math.pow(2, retries), 30000) + Math.random() * 1000;
      return new Promise(function (resolve) { setTimeout(resolve, wait); });
    },
    // A quiet topic sends nothing for minutes: ping so that proxies and
    // load balancers do not drop the idle connection.
    keepAlive: 15000,
  });
  var props = {
    fetcher: GraphiQL.createFetcher({ url: endpoint.toString(), wsClient: wsClient }),
    defaultQuery: root.getAttribute('data-default-query') || undefined,
  };
  if (params.has('query')) props.query = params.get('query');
  if (params.has('variables')) props.variables = params.get('variables');
  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, props));

  if (params.get('run') === '1') {
    // GraphiQL enables its execute button before its editors hold the
    // query on a slow machine, and a press then does nothing: press again
    // until it turns into the stop button (the operation runs) or a result
    // shows, for up to a minute.
    var started = Date.now();
    var pressedAt = 0;
    var timer = setInterval(function () {
      var button = document.querySelector('.graphiql-execute-button');
      var running = button && /^Stop/.test(button.getAttribute('aria-label') || '');
      var pane = document.querySelector('.graphiql-response');
      var answered = pane && pane.innerText.indexOf('{') >= 0;
      if (running || answered || Date.now() - started > 60000) {
        clearInterval(timer);
        return;
      }
      if (button && !button.disabled && Date.now() - pressedAt > 1000) {
        pressedAt = Date.now();
        button.click();
      }
    }, 50);
  }
})();
