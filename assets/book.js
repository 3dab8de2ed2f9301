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
    '<div class="book-zoom__scroll" tabindex="0"></div>';
  var close = dialog.querySelector("button");
  var scroll = dialog.querySelector(".book-zoom__scroll");
  var image = null;  // created on opening, removed on closing: no image without a source on the page
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
    if (image) {
      image.remove();
      image = null;
    }
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
      image = document.createElement("img");
      image.className = "book-zoom__image";
      scroll.appendChild(image);
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

// The language switch keeps the reader's place: the other edition's page has the same section
// labels, so the link gets the label of the section being read (the last one whose heading has scrolled
// past the top of the window) just before it is followed.
(function () {
  var sectionInView = function () {
    var found = "";
    document.querySelectorAll("article.bd-article section[id]").forEach(function (section) {
      if (section.getBoundingClientRect().top <= 120) {
        // the section's label (its first child, "ch05-too-late"): the same in both editions,
        // where the section's own id comes from its heading's words
        var label = section.querySelector(":scope > span[id]:first-child");
        found = label ? label.id : section.id;
      }
    });
    return found;
  };
  var keepPlace = function (event) {
    var link = event.target.closest && event.target.closest("a.book-language-switch");
    if (!link) {
      return;
    }
    var id = sectionInView();
    var base = link.href.split("#")[0];
    link.href = id && window.scrollY > 50 ? base + "#" + id : base;
  };
  ["pointerdown", "click", "focusin", "contextmenu"].forEach(function (type) {
    document.addEventListener(type, keepPlace, true);
  });
})();

// Search: snippets from the text of the page's article (Sphinx takes the whole [role=main],
// whose first text is the page's list of sections; its summaries are read when each result's
// page has been fetched, after this handler has replaced the reader), and a pointer to the other edition when a
// query in its script finds nothing here (掩码 in the English edition; "evenly" in the Chinese).
document.addEventListener("DOMContentLoaded", function () {
  var results = document.getElementById("search-results");
  if (!results || typeof Search === "undefined") {
    return;
  }
  Search.htmlToText = function (htmlString, anchor) {
    var page = new DOMParser().parseFromString(htmlString, "text/html");
    var article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
    if (!article) {
      return "";
    }
    article.querySelectorAll(".headerlink, script, style, nav, details.book-setup, " +
      ".cell_input, .cell_output, mjx-assistive-mml, .book-zoom-label, figure img")
      .forEach(function (element) { element.remove(); });
    var part = anchor ? article.querySelector(anchor) : null;
    return (part || article).textContent.replace(/\s+/g, " ");
  };
  var zh = (document.documentElement.lang || "").indexOf("zh") === 0;
  var query = new URLSearchParams(window.location.search).get("q") || "";
  var cjk = /[\u3400-\u9fff\uf900-\ufaff]/.test(query);
  var latin = /[A-Za-z]/.test(query);
  if (!query || (zh ? cjk || !latin : !cjk)) {
    return; // a query in this edition's own script: nothing to point to
  }
  var pointed = false;
  var point = function () {
    var status = Search.status;  // set when the search has finished
    if (pointed || results.querySelector("ul.search li") || !status ||
        !status.textContent.trim()) {
      return;
    }
    pointed = true;
    var note = document.createElement("p");
    note.className = "book-other-edition-search";
    note.lang = zh ? "en" : "zh-CN";
    var link = document.createElement("a");
    link.href = (zh ? "../search.html" : "zh/search.html") + "?q=" + encodeURIComponent(query);
    link.hreflang = note.lang;
    link.textContent = zh ? "Search the English edition for “" + query + "”"
      : "在中文版中搜索“" + query + "”";
    note.appendChild(document.createTextNode(zh ? "Nothing found in the Chinese edition. "
      : "英文版中没有找到。"));
    note.appendChild(link);
    results.appendChild(note);
  };
  // Sphinx starts the search as soon as its deferred script runs (before this handler): a query
  // that found nothing has already finished; one still running finishes later.
  new MutationObserver(point).observe(results, {childList: true, subtree: true,
                                                characterData: true});
  point();
});
