/** Fixed names of the door's cookies, shared by its modules and tests. */

/** The session cookie: a random id; the session itself is server-side. */
export const SESSION_COOKIE = "skein_door";

/** Binds a pending sign-in's state to the browser that started it (path /callback only). */
export const SIGNIN_COOKIE = "skein_door_signin";
