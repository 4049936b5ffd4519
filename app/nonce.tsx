/** The CSP nonce of the current server render (empty in the browser, which never needs it). */
import { createContext, useContext } from "react";

export const NonceContext = createContext<string>("");
export const useNonce = () => useContext(NonceContext);
