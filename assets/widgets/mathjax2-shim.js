// The ipywidgets embed manager typesets widget labels through the MathJax 2 API
// (MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])); the book loads MathJax 3, which has no
// Hub. Map that one call onto MathJax 3. Registered before embed.js, so it runs first on
// DOMContentLoaded, after the deferred MathJax script has defined window.MathJax.
document.addEventListener("DOMContentLoaded", function () {
  var mathjax = window.MathJax;
  if (!mathjax || mathjax.Hub || !mathjax.startup) {
    return;
  }
  mathjax.Hub = {
    Queue: function (command) {
      var element = Array.isArray(command) ? command[2] : undefined;
      mathjax.startup.promise.then(function () {
        return mathjax.typesetPromise(element ? [element] : undefined);
      });
    },
  };
});
