// Attention, Executed: the phone sidebars (pydata-sphinx-theme's <dialog> panels, opened by the
// article header's ☰ and contents buttons below 992 px) close when the reader follows a link in
// them. The theme closes them only on Escape or a click outside: a link to a section of the page
// would otherwise scroll the page behind the still-open panel.
document.addEventListener("click", function (event) {
  var link = event.target.closest && event.target.closest("a[href]");
  var panel = link && link.closest("#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal");
  if (panel && panel.open) {
    panel.close();
  }
});
