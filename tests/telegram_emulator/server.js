// Telegram Bot API emulator for the tests: telegram-test-api, with the fixture adding what it
// lacks (adapted here, never in the product):
//   - getMe answers a complete User; sendChatAction and sendMessageDraft are accepted;
//   - every bot API call is recorded (method, body, time) for ordering assertions;
//   - /control/flood makes the next N calls of a method answer 429 with retry_after;
//   - /control/fail lets `after` calls of a method through, then drops the connection of the
//     next `count` (a network error);
//   - /control/redeliver marks a user update unread again, as Telegram redelivers after a
//     restart that did not confirm it;
//   - /control/unread counts the updates the bot has not fetched yet;
//   - getUpdates keeps Telegram's offset: an update is confirmed only by a later call whose
//     offset is above its id; until then a poller that starts afresh (offset 0) gets it again;
//   - /control/update queues any raw update (an inline query, a chosen inline result);
//     answerInlineQuery is accepted (and recorded);
//   - /control/admins names a chat's admins, for getChatMember;
//   - /control/file stores a file (base64) under a file_id, for getFile and its download;
//   - answerGuestQuery (Bot API 10.0) answers a SentGuestMessage; /control/guest_late makes the
//     next N answer "query is too old", as Telegram does after the guest query's window;
//   - editMessageText by inline_message_id (an inline or guest message) is recorded and taken;
//   - editMessageReplyMarkup (buttons taken off a message) is recorded and taken;
//   - sendMessage with ephemeral_message_parameters (Bot API 10.2/10.3) is recorded and passed
//     on; /control/no_ephemeral makes a chat refuse them (400), as a chat that does not allow them;
//   - sendRichMessage (Bot API 10.1) is recorded and answered; /control/no_rich refuses it (400).
// Usage: node server.js [port]; prints {"port": N} on stdout once listening on 127.0.0.1.
'use strict';

const express = require('express');
const TelegramServer = require('telegram-test-api');

// Callback queries need chat_instance (a required field of the Bot API).
const formatUpdate = TelegramServer.formatUpdate;
TelegramServer.formatUpdate = (update) => {
  if (update.raw) return { update_id: update.updateId, ...update.raw };
  const formatted = formatUpdate(update);
  if (formatted.callback_query) {
    formatted.callback_query.chat_instance = String(update.callbackQuery.chat_instance || 'test');
  }
  return formatted;
};

const inner = new TelegramServer({ port: 0, host: '127.0.0.1', storeTimeout: 3600 });

// Telegram's offset: updates below it are confirmed, and those fetched but not confirmed come
// again to a poller that asks from a lower offset (a receiver that was killed and restarted).
inner.getUpdates = (token, offset) => {
  const mine = inner.storage.userMessages.filter((u) => u.botToken === token);
  if (offset > 0) mine.forEach((u) => { if (Number(u.updateId) < offset) u.confirmed = true; });
  const due = mine.filter(
    (u) => !u.isRead || (!u.confirmed && Number(u.updateId) >= offset),
  );
  return due.map((u) => {
    u.isRead = true;
    return TelegramServer.formatUpdate(u);
  });
};

// Sent messages carry their date in seconds, as the Bot API does (the package uses ms).
const addBotMessage = inner.addBotMessage.bind(inner);
inner.addBotMessage = (message, token) => {
  const sent = addBotMessage(message, token);
  sent.date = Math.floor(sent.date / 1000);
  return sent;
};
const outer = express();
outer.use(express.json({ limit: '5mb' }));
outer.use(express.urlencoded({ extended: true }));

const calls = {}; // token -> [{method, body, time}]
const floods = {}; // `${token} ${method}` -> {count, retryAfter}
const failures = {}; // `${token} ${method}` -> count

const noRich = new Set(); // "token chat_id": chats where sendRichMessage is refused
const noEphemeral = new Set(); // "token chat_id": chats where ephemeral messages are refused
const lateGuests = {}; // token → how many answerGuestQuery calls come after the window

function record(token, method, body) {
  (calls[token] = calls[token] || []).push({ method, body, time: Date.now() });
}

outer.post('/control/flood', (req, res) => {
  const { token, method, count, retry_after: retryAfter } = req.body;
  floods[`${token} ${method}`] = { count: Number(count), retryAfter: Number(retryAfter) };
  res.json({ ok: true });
});

outer.post('/control/fail', (req, res) => {
  const { token, method, count, after } = req.body;
  failures[`${token} ${method}`] = { after: Number(after || 0), count: Number(count) };
  res.json({ ok: true });
});

outer.post('/control/redeliver', (req, res) => {
  const { token, update_id: updateId } = req.body;
  const found = inner.storage.userMessages.filter(
    (u) => u.botToken === token && Number(u.updateId) === Number(updateId),
  );
  found.forEach((u) => { u.isRead = false; });
  res.json({ ok: true, result: found.length });
});

outer.post('/control/unread', (req, res) => {
  const unread = inner.storage.userMessages.filter(
    (u) => u.botToken === req.body.token && !u.isRead,
  );
  res.json({ ok: true, result: unread.length });
});

const admins = {}; // `${token} ${chatId}` -> [user ids]
const files = {}; // file_id -> Buffer

outer.post('/control/update', (req, res) => {
  const { token, update } = req.body;
  inner.storage.userMessages.push({
    botToken: token, raw: update, updateId: inner.updateId, time: Date.now(), isRead: false,
  });
  inner.updateId += 1;
  res.json({ ok: true });
});

outer.post('/control/admins', (req, res) => {
  admins[`${req.body.token} ${req.body.chat_id}`] = req.body.user_ids.map(Number);
  res.json({ ok: true });
});

outer.post('/control/file', (req, res) => {
  files[req.body.file_id] = Buffer.from(req.body.base64, 'base64');
  res.json({ ok: true });
});

outer.get('/file/bot:token/:path', (req, res) => {
  const data = files[req.params.path];
  if (!data) return res.status(404).end();
  return res.type('application/octet-stream').send(data);
});

outer.post('/control/no_rich', (req, res) => {
  noRich.add(`${req.body.token} ${req.body.chat_id}`);
  res.json({ ok: true });
});

outer.post('/control/no_ephemeral', (req, res) => {
  noEphemeral.add(`${req.body.token} ${req.body.chat_id}`);
  res.json({ ok: true });
});

outer.post('/control/guest_late', (req, res) => {
  lateGuests[req.body.token] = Number(req.body.count || 1);
  res.json({ ok: true });
});

outer.post('/control/calls', (req, res) => {
  res.json({ ok: true, result: calls[req.body.token] || [] });
});

outer.all('/bot:token/:method', (req, res, next) => {
  const { token, method } = req.params;
  const body = Object.assign({}, req.query, req.body);
  const key = `${token} ${method}`;
  const failure = failures[key];
  if (failure && failure.after > 0) {
    failure.after -= 1;
  } else if (failure && failure.count > 0) {
    failure.count -= 1;
    record(token, `${method}:dropped`, body);
    req.socket.destroy();
    return undefined;
  }
  const flood = floods[key];
  if (flood && flood.count > 0) {
    flood.count -= 1;
    record(token, `${method}:flooded`, body);
    return res.status(429).json({
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${flood.retryAfter}`,
      parameters: { retry_after: flood.retryAfter },
    });
  }
  if (method !== 'getUpdates') record(token, method, body);
  if (method === 'getUpdates') {
    return res.json({ ok: true, result: inner.getUpdates(token, Number(body.offset || 0)) });
  }
  if (method === 'getMe') { // the package's answer lacks is_bot, a required field
    return res.json({
      ok: true,
      result: { id: 666, is_bot: true, first_name: 'Sommelier Test', username: 'SommelierTestBot' },
    });
  }
  if (method === 'sendChatAction' || method === 'sendMessageDraft' || method === 'answerInlineQuery') {
    return res.json({ ok: true, result: true });
  }
  if (method === 'sendMessage' && body.ephemeral_message_parameters
      && noEphemeral.has(`${token} ${body.chat_id}`)) { // Bot API 10.2: a chat that refuses them
    return res.status(400).json({
      ok: false, error_code: 400, description: 'Bad Request: ephemeral messages are not allowed in the chat',
    });
  }
  if (method === 'sendRichMessage') { // Bot API 10.1: taken, or refused where told to
    if (noRich.has(`${token} ${body.chat_id}`)) {
      return res.status(400).json({
        ok: false, error_code: 400, description: 'Bad Request: rich messages are not supported',
      });
    }
    const chat = { id: Number(body.chat_id), type: 'private', first_name: 'Ana' };
    return res.json({ ok: true, result: { message_id: 900000 + calls[token].length, date: Math.floor(Date.now() / 1000), chat } });
  }
  if (method === 'answerGuestQuery') { // Bot API 10.0: a SentGuestMessage, or too late
    if (lateGuests[token] > 0) {
      lateGuests[token] -= 1;
      return res.status(400).json({
        ok: false, error_code: 400,
        description: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
      });
    }
    return res.json({ ok: true, result: { inline_message_id: `guest-${body.guest_query_id}` } });
  }
  if (method === 'editMessageText' && body.inline_message_id) { // an inline (or guest) message
    return res.json({ ok: true, result: true });
  }
  if (method === 'editMessageReplyMarkup') { // a message's buttons changed (or taken off)
    return res.json({ ok: true, result: true });
  }
  if (method === 'getChatMember') {
    const ids = admins[`${token} ${body.chat_id}`] || [];
    const userId = Number(body.user_id);
    const status = ids.includes(userId) ? 'administrator' : 'member';
    const user = { id: userId, is_bot: false, first_name: 'Member' };
    const extra = status === 'administrator' ? {
      can_be_edited: false, is_anonymous: false, can_manage_chat: true, can_delete_messages: true,
      can_manage_video_chats: true, can_restrict_members: true, can_promote_members: false,
      can_change_info: true, can_invite_users: true, can_post_stories: false,
      can_edit_stories: false, can_delete_stories: false,
    } : {};
    return res.json({ ok: true, result: { status, user, ...extra } });
  }
  if (method === 'getFile') {
    const data = files[body.file_id];
    if (!data) return res.status(400).json({ ok: false, error_code: 400, description: 'Bad Request: file not found' });
    return res.json({
      ok: true,
      result: { file_id: body.file_id, file_unique_id: body.file_id, file_size: data.length, file_path: body.file_id },
    });
  }
  return next();
});

outer.use(inner.webServer);

const server = outer.listen(Number(process.argv[2] || 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});

function stop() { server.close(() => process.exit(0)); setTimeout(() => process.exit(0), 500); }
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
