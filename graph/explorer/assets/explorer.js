// Mounts GraphiQL on #graphiql, pointed at the endpoint in its data-endpoint
// attribute. URL parameters: `query` and `variables` fill the editors;
// `run=1` executes the query once the page is ready (used by the browser test
// and by shared links).
(function () {
  'use strict';
  var root = document.getElementById('graphiql');
  var endpoint = new URL(root.getAttribute('data-endpoint'), window.location.href).toString();
  var params = new URLSearchParams(window.location.search);
  var props = {
    fetcher: GraphiQL.createFetcher({ url: endpoint }),
    defaultQuery: root.getAttribute('data-default-query') || undefined,
  };
  if (params.has('query')) props.query = params.get('query');
  if (params.has('variables')) props.variables = params.get('variables');
  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, props));

  if (params.get('run') === '1') {
    var tries = 0;
    var timer = setInterval(function () {
      var button = document.querySelector('.graphiql-execute-button');
      if (button && !button.disabled) {
        clearInterval(timer);
        button.click();
      } else if (++tries > 200) {
        clearInterval(timer);
      }
    }, 50);
  }
})();
