"""The web page (plain HTML + JS, no build step): ``static/index.html``, ``app.js``, ``style.css``."""
