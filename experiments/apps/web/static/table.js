placeholder table.js
