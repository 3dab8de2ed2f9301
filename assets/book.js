// Attention, Executed: the phone sidebars (pydata-sphinx-theme's <dialog> panels, opened by the
// article header's ☰ and contents buttons below 992 px).
// - A link followed in a panel closes it: the theme closes them only on Escape or a click outside,
//   and a link to a section of the page would scroll the page behind the still-open panel.
// - Escape gives the focus back to the panel's button: sphinx-book-theme blurs the button when it
//   is pressed (to dismiss its tooltip), so the theme's own focus return lands on the page's body
//   and the next Tab starts again from the top.
document.addEventListener("click", function (event) {
  var link = event.target.closest && event.target.closest("a[href]");
  var panel = link && link.closest("#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal");
  if (panel && panel.open) {
    panel.close();
  }
});

document.addEventListener("DOMContentLoaded", function () {
  ["primary", "secondary"].forEach(function (side) {
    var panel = document.getElementById("pst-" + side + "-sidebar-modal");
    var button = document.querySelector(".bd-header-article ." + side + "-toggle");
    if (!panel || !button) {
      return;
    }
    var escaped = false;
    panel.addEventListener("keydown", function (event) {
      escaped = event.key === "Escape";
    }, true);
    panel.addEventListener("close", function () {
      if (escaped) {
        setTimeout(function () { button.focus(); }, 0); // after the theme's own focus return
      }
      escaped = false;
    });
  });
});
