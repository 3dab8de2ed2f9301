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

// Figures readable on a phone: a figure drawn wider than the text column is shown scaled down;
// its image is already a link to the full-resolution file (Sphinx's image-reference, the robust
// baseline without JavaScript). Here that link opens a full-window view instead, with the image
// at its own (desktop) size, scrolling both ways; Escape, the Close button or a click beside the
// image closes it and gives the focus back to the figure. An "Enlarge" label shows on figures that
// are scaled down (it is part of the link's name, so the link says what it does).
document.addEventListener("DOMContentLoaded", function () {
  var links = document.querySelectorAll("article.bd-article a.image-reference");
  if (!links.length) {
    return;
  }
  var zh = (document.documentElement.lang || "").indexOf("zh") === 0;
  var dialog = document.createElement("dialog");
  dialog.className = "book-zoom";
  dialog.setAttribute("aria-label", zh ? "放大的图" : "Enlarged figure");
  dialog.innerHTML = '<button type="button" class="book-zoom__close"></button>' +
    '<div class="book-zoom__scroll" tabindex="0"><img class="book-zoom__image" alt=""></div>';
  var close = dialog.querySelector("button");
  var image = dialog.querySelector("img");
  close.textContent = zh ? "关闭" : "Close";
  document.body.appendChild(dialog);
  var opener = null;
  close.addEventListener("click", function () { dialog.close(); });
  dialog.addEventListener("click", function (event) {
    if (event.target === dialog || event.target.classList.contains("book-zoom__scroll")) {
      dialog.close();
    }
  });
  dialog.addEventListener("close", function () {
    image.removeAttribute("src");
    if (opener) {
      var back = opener;
      setTimeout(function () { back.focus(); }, 0);
    }
  });
  var fullWidth = function (thumb) {  // the figure's own size: MyST-NB's inline width, in CSS px
    return parseFloat(thumb.style.width) || thumb.naturalWidth;
  };
  var mark = function () {
    links.forEach(function (link) {
      var thumb = link.querySelector("img");
      if (thumb) {
        link.classList.toggle("book-zoom-scaled", thumb.clientWidth < fullWidth(thumb) - 1);
      }
    });
  };
  links.forEach(function (link) {
    var thumb = link.querySelector("img");
    if (!thumb) {
      return;
    }
    link.classList.add("book-zoom-link");
    var label = document.createElement("span");
    label.className = "book-zoom-label";
    label.textContent = zh ? "放大" : "Enlarge";
    link.appendChild(label);
    link.addEventListener("click", function (event) {
      if (event.button || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
        return; // a new tab or window: the link itself
      }
      event.preventDefault();
      opener = link;
      image.alt = thumb.alt;
      image.style.width = fullWidth(thumb) + "px";
      image.src = link.href;
      dialog.showModal();
      close.focus();
    });
  });
  mark();
  window.addEventListener("resize", mark);
  window.addEventListener("load", mark);
});
